import { log, machine } from './support';

// `npm run bench -- <name> [--key=value …]`: each bench prints one JSON line to stdout.
const BENCHES: Record<string, () => Promise<{ run(args: Record<string, number>): Promise<void> }>> = {
  'log-append': () => import('./log-append.bench'),
  'log-consume': () => import('./log-consume.bench'),
  'identity-batch': () => import('./identity-batch.bench'),
  'identity-incremental': () => import('./identity-incremental.bench'),
  merge: () => import('./merge.bench'),
  'merge-soak': () => import('./merge-soak.bench'),
  'hubspot-backfill': () => import('./hubspot-backfill.bench'),
  'outlook-backfill': () => import('./outlook-backfill.bench'),
  'e2e-throughput': () => import('./e2e-throughput.bench'),
  'e2e-latency': () => import('./e2e-latency.bench'),
  'e2e-latency-hops': () => import('./e2e-latency-hops.bench'),
  'api-read': () => import('./api-read.bench'),
  'web-record': () => import('./web-record.bench'),
  'web-live': () => import('./web-live.bench'),
  'web-admin': () => import('./web-admin.bench'),
  replay: () => import('./replay.bench'),
  insights: () => import('./insights.bench'),
  'sync-activities': () => import('./sync-activities.bench'),
};

async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  if (!name || !(name in BENCHES)) {
    console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [--total=N]`);
    process.exit(2);
  }
  const args: Record<string, number> = {};
  for (const arg of rest) {
    const m = /^--([a-z-]+)=(\d+)$/.exec(arg);
    if (!m) throw new Error(`bad argument ${arg}: use --name=number`);
    args[m[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = Number(m[2]);
  }
  log(`machine: ${machine()}`);
  await (await BENCHES[name]!()).run(args);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
