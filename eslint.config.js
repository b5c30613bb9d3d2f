// ESLint 9 flat config. Besides the usual TypeScript checks it enforces the dependency
// direction of docs/architecture.md:
//
//   domain, contract  <-  store, blobs, vision  <-  services  <-  jobs, http, cli
//   core never imports electron / react / konva / renderer
//   renderer imports from core only core/contract, and only as types
//   electron imports only core's public entry (core/index)
//
// The rules are `@typescript-eslint/no-restricted-imports` patterns (the base rule plus
// `allowTypeImports`). Patterns are regexes over the import string as written. Imports in this
// repo are relative and extension-less, so a layer is recognised as "one or more `../`, an
// optional `core/`, then the layer's folder name": from core/services/x.ts, `../http/server`
// and `../../core/http/server` both name core/http, while `./http` (a sub-folder of services)
// does not. electron/lint-rules.test.ts proves that every rule fires.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Layers of core/ and the layers each one must not import. */
const CORE_LAYERS = [
  'domain',
  'contract',
  'store',
  'blobs',
  'vision',
  'services',
  'jobs',
  'http',
  'cli',
];
const FORBIDDEN_BY_LAYER = {
  // The bottom: pure rules and wire types import nothing else of core.
  domain: CORE_LAYERS.filter((l) => l !== 'domain'),
  contract: CORE_LAYERS.filter((l) => l !== 'contract'),
  // Adapters: may use domain, contract and each other, never the layers above them.
  store: ['services', 'jobs', 'http', 'cli'],
  blobs: ['services', 'jobs', 'http', 'cli'],
  vision: ['services', 'jobs', 'http', 'cli'],
  // Use cases: may use everything below, never what drives them.
  services: ['jobs', 'http', 'cli'],
};

/** Import string that climbs out of the current folder and names `layer` (a folder of core/). */
const layerRegex = (layers) => `^(\\.\\./)+(core/)?(${layers.join('|')})(/|$)`;
/** `..`, `../..`, `../index`, `../../core`, `../../core/index`: core's public entry. */
const CORE_ENTRY_REGEX = '^\\.\\.(/\\.\\.)*(/core)?(/index)?/?$';

/** Packages that belong to the UI or the desktop shell, never to the service. */
const UI_PACKAGES = [
  'electron',
  'react',
  'react-dom',
  'konva',
  'react-konva',
  'zustand',
  '@tanstack/[^/]+',
];
/**
 * A bare package name or one of its sub-paths. Regexes, not gitignore `group`s: a group like
 * `electron/*` would also match the relative path `../../electron/main`.
 */
const packageRegex = (names) => `^(${names.join('|')})(/.*)?$`;

const coreCommonPatterns = [
  {
    regex: packageRegex(UI_PACKAGES),
    message: 'core/ is plain Node: it never imports Electron or UI libraries (architecture.md).',
  },
  {
    regex: '^(\\.\\./)+renderer(/|$)',
    message: 'core/ never imports renderer code (architecture.md).',
  },
  {
    regex: '^(\\.\\./)+electron(/|$)',
    message: 'core/ never imports the Electron shell (architecture.md).',
  },
];

/** Config objects for core/<layer>/**; each lists the full pattern set for that folder. */
const coreLayerConfigs = Object.entries(FORBIDDEN_BY_LAYER).map(([layer, forbidden]) => ({
  name: `blueline/imports/core-${layer}`,
  files: [`core/${layer}/**/*.{ts,tsx,js,mjs}`],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          ...coreCommonPatterns,
          {
            regex: layerRegex(forbidden),
            message: `core/${layer} must not import ${forbidden.join(', ')}: dependencies point down (domain, contract <- store, blobs, vision <- services <- jobs, http, cli).`,
          },
          {
            regex: CORE_ENTRY_REGEX,
            message: `core/${layer} must not import core's public entry (core/index), which wires every layer together.`,
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  {
    name: 'blueline/ignores',
    ignores: [
      'node_modules/',
      'out/',
      'dist/',
      '.data/',
      'test-results/',
      'playwright-report/',
      'e2e/screenshots/',
      'bench/results/',
      'coverage/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    name: 'blueline/base',
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Tests, benches and reliability scripts handle arbitrary JSON from the API; `any` there is
    // the honest type.
    name: 'blueline/tests',
    files: [
      '**/*.test.ts',
      'core/test/**/*.ts',
      'e2e/**/*.ts',
      '**/test-support.ts',
      '**/*.test-support.ts',
      'reliability/**/*.ts',
      'bench/**/*.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    name: 'blueline/cjs-scripts',
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    name: 'blueline/browser-globals',
    files: [
      'renderer/**/*.{ts,tsx,js}',
      'electron/preload/**/*.ts',
      'e2e/**/*.ts',
      'bench/viewer/**/*.{ts,js}',
    ],
    languageOptions: { globals: { ...globals.browser } },
  },

  // --- Import direction -------------------------------------------------------------------
  // Files directly in core/ (index.ts: the public entry) and the top layers (jobs, http, cli)
  // may import any layer, but still nothing of the UI.
  {
    name: 'blueline/imports/core',
    files: ['core/**/*.{ts,tsx,js,mjs}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: coreCommonPatterns }],
    },
  },
  ...coreLayerConfigs,
  {
    name: 'blueline/imports/renderer',
    files: ['renderer/**/*.{ts,tsx,js,mjs}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // core, core/index, core/<anything but contract>
              regex: '^(\\.\\./)+core(/(?!contract(/|$)).*)?$',
              message:
                'renderer/ talks to the service over HTTP only; it may import types from core/contract and nothing else of core.',
            },
            {
              regex: '^(\\.\\./)+core/contract(/|$)',
              allowTypeImports: true,
              message:
                'renderer/ imports core/contract as types only (`import type { … }`), so no service code reaches the bundle.',
            },
            {
              regex: '^(\\.\\./)+electron(/|$)',
              message:
                'renderer/ never imports the Electron shell; it reads window.blueline from the preload.',
            },
            {
              regex: packageRegex(['electron']),
              message:
                'renderer/ runs sandboxed; it never imports electron (use window.blueline from the preload).',
            },
          ],
        },
      ],
    },
  },
  {
    name: 'blueline/imports/electron',
    files: ['electron/**/*.{ts,tsx,js,mjs}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // core/<anything> except core/index (the bare `core` folder resolves to index too).
              regex: '^(\\.\\./)+core/(?!index$).+',
              message:
                "electron/ imports only core's public entry (core/index), never a layer directly.",
            },
            {
              regex: '^(\\.\\./)+renderer(/|$)',
              message:
                'electron/ never imports renderer code; the window loads the built renderer.',
            },
            {
              regex: packageRegex(UI_PACKAGES.filter((p) => p !== 'electron')),
              message: 'electron/ is the shell: UI libraries belong in renderer/.',
            },
          ],
        },
      ],
    },
  },
);
