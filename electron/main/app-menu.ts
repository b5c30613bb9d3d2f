// The application menu. Standard roles (edit, zoom, window) so keyboard shortcuts behave as the
// OS expects; reload and dev tools only in development builds, because a reload in the middle of
// an upload or compare is never what a reviewer means.
import { app, Menu, shell, type MenuItemConstructorOptions } from 'electron';

export interface AppMenuOptions {
  /** Folder holding the service's database, files and TLS material (per-user app data). */
  dataDir: string;
  /** `https://127.0.0.1:<port>/v1` — shown so scripts can talk to the running desktop service. */
  baseUrl: string;
  showMessage: (title: string, detail: string) => void;
}

export function installAppMenu({ dataDir, baseUrl, showMessage }: AppMenuOptions): void {
  const isMac = process.platform === 'darwin';
  const dev = !app.isPackaged;

  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        {
          label: 'Open Data Folder',
          click: () => {
            void shell.openPath(dataDir);
          },
        },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        ...(dev
          ? ([
              { role: 'reload' },
              { role: 'forceReload' },
              { role: 'toggleDevTools' },
              { type: 'separator' },
            ] satisfies MenuItemConstructorOptions[])
          : []),
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        {
          label: 'Service Address',
          click: () =>
            showMessage(
              'Blueline service',
              `The desktop app's local API is listening at\n${baseUrl}\n\n` +
                `Data folder:\n${dataDir}\n\n` +
                'Create a key for scripts with `npm run --silent blueline -- keys create --org NAME --data-dir <data folder>`.',
            ),
        },
        ...(isMac ? [] : [{ role: 'about' as const }]),
      ],
    },
  ];

  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
