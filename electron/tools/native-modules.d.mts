// Types for native-modules.mjs (plain ESM so scripts/start.mjs can run it without tsx).
export declare const repoRoot: string;
export declare const installedBinary: string;
export declare function electronExecutable(): string | null;
export declare function electronTarget(): { version: string; abi: string };
export declare function cachedBinary(abi: string): string;
export declare function addonAbi(file?: string): string | null;
export declare function ensureNodeBuild(): void;
export declare function prepareElectronBuild(): string;
