import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'core/**/*.test.ts',
      'electron/**/*.test.ts',
      'renderer/**/*.test.ts',
      'reliability/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores here: run test files two at a time so CPU-heavy vision tests do not starve each other.
    maxWorkers: 2,
  },
});
