// `npm run test:reliability`: the crash cycles, hostile files, load and npm audit scripts in turn (they share
// two cores with everything else, so never at once). RELIABILITY_CYCLES sets the kill cycles
// (default 20; CI may use fewer). Exits non-zero when any script fails.
import { spawnSync } from 'node:child_process';
import { repoRoot } from './lib';

const scripts = (process.env.RELIABILITY_ONLY ?? 'crash-cycles,hostile-files,load,audit').split(
  ',',
);
const results: [string, number | null, number][] = [];
for (const name of scripts) {
  const t0 = Date.now();
  console.log(`\n=== reliability/${name}.ts ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `reliability/${name}.ts`], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: process.env,
  });
  results.push([name, r.status, Math.round((Date.now() - t0) / 1000)]);
}
console.log('\n=== reliability summary ===');
for (const [name, status, s] of results)
  console.log(`${status === 0 ? 'pass' : 'FAIL'}  ${name} (${s} s)`);
process.exit(results.every(([, status]) => status === 0) ? 0 : 1);
