import { readFileSync } from 'node:fs';

/** A process's memory and CPU as /proc tells them (proc(5)). */
export interface Proc {
  rssMB(): number;
  /** Pss and private (Private_Clean + Private_Dirty) from smaps_rollup, MB */
  shares(): { pssMB: number; privateMB: number };
  cpuSeconds(): number;
}
export function proc(pid: number): Proc {
  const kb = (text: string, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rssMB: () => (kb(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') * 1024) / 1e6,
    shares() {
      const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      return {
        pssMB: (kb(t, 'Pss') * 1024) / 1e6,
        privateMB: ((kb(t, 'Private_Clean') + kb(t, 'Private_Dirty')) * 1024) / 1e6,
      };
    },
    cpuSeconds() {
      // fields after the parenthesised command name; utime and stime are the 14th and 15th (proc(5))
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
    },
  };
}
