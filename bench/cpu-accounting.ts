import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) used so far, per part of the machine's work. */
export type CpuSeconds = Record<string, number>;

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

function processes(): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // comm is in parentheses and may hold spaces: the fields after its closing one.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const rest = stat.slice(close + 2).split(' ');
      // rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
      found.push({
        pid: Number(name),
        ppid: Number(rest[1]),
        comm,
        ticks: Number(rest[11]) + Number(rest[12]),
      });
    } catch {
      // The process ended while we read.
    }
  }
  return found;
}

/**
 * Reads the CPU time of the bench's own process, each named child process tree, and the
 * PostgreSQL and Redis servers (every backend). Taken at the start and end of a measured
 * window, the difference says where the machine's cores went.
 */
export function cpuSeconds(children: Readonly<Record<string, readonly (number | undefined)[]>>): CpuSeconds {
  const all = processes();
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const kids = new Map<number, Proc[]>();
  for (const p of all) {
    const siblings = kids.get(p.ppid);
    if (siblings) siblings.push(p);
    else kids.set(p.ppid, [p]);
  }
  const treeTicks = (pid: number): number =>
    (byPid.get(pid)?.ticks ?? 0) + (kids.get(pid) ?? []).reduce((s, k) => s + treeTicks(k.pid), 0);
  const out: CpuSeconds = {};
  for (const [role, pids] of Object.entries(children))
    out[role] =
      pids.reduce<number>((s, pid) => s + (pid === undefined ? 0 : treeTicks(pid)), 0) / TICKS_PER_SECOND;
  out.postgres = all.filter((p) => p.comm === 'postgres').reduce((s, p) => s + p.ticks, 0) / TICKS_PER_SECOND;
  out.redis =
    all.filter((p) => p.comm.startsWith('redis-server')).reduce((s, p) => s + p.ticks, 0) / TICKS_PER_SECOND;
  const own = process.cpuUsage();
  out.bench = (own.user + own.system) / 1e6;
  return out;
}

/** CPU seconds per part between two readings, rounded, with their total. */
export function cpuBetween(before: CpuSeconds, after: CpuSeconds): CpuSeconds {
  const used: CpuSeconds = {};
  let total = 0;
  for (const [role, s] of Object.entries(after)) {
    const d = Math.max(0, s - (before[role] ?? 0));
    used[role] = Number(d.toFixed(2));
    total += d;
  }
  used.total = Number(total.toFixed(2));
  return used;
}
