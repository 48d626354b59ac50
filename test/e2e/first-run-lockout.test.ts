/**
 * The first-run page's setup-code lockout (src/api/http/onboarding.ts, docs/install.md "Setup in
 * the browser"): the tenth wrong code in a row locks the page, every code (the right one too) is
 * refused while it holds, so a guesser cannot win by luck, it ends after a minute on a clock that
 * never steps, and no answer or log line carries the code. The real server over HTTP: in this
 * process with its monotonic clock handed in (the minute passes without a wait), and `sitegw run`
 * on the placeholder under libfaketime, whose wall clock a day forward does not end the lock.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildOnboarding, LOCK_MS, WRONG_CODES } from '../../src/api/http/onboarding.js';
import { newSetupCode, SETUP_CODE_FILE, saveSetupCode } from '../../src/setup/first-run.js';
import { UNCONFIGURED_MARK } from '../../src/setup/site-yaml.js';
import { waitFor } from '../support/demo.js';
import { fakeClockEnv, LIBFAKETIME, setFakeClock } from '../support/faketime.js';
import { type PlaceholderRun, runOnPlaceholder } from '../support/first-run.js';

/** a code of the same shape that is not `code` */
const wrongOf = (code: string, i: number) => {
  const d = code.replace(/-/g, '');
  const w = String((Number(d) + 1 + i) % 1_000_000_000).padStart(9, '0');
  return `${w.slice(0, 3)}-${w.slice(3, 6)}-${w.slice(6)}`;
};

interface Answer {
  status: number;
  code: string;
  retryAfter: string | null;
  text: string;
  date: string | null;
}

/** a scan without a target: a code let through is refused for its body (400), changing nothing */
async function ask(url: string, code: string): Promise<Answer> {
  const r = await fetch(`${url}/onboarding/scan`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const text = await r.text();
  const headers = [...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
  return {
    status: r.status,
    code: (JSON.parse(text) as { code: string }).code,
    retryAfter: r.headers.get('retry-after'),
    text: `${headers}\n${text}`,
    date: r.headers.get('date'),
  };
}

/** the code in any form it could be written: with dashes, spaces or none */
const leaks = (text: string, code: string) => {
  const d = code.replace(/-/g, '');
  return [code, d, `${d.slice(0, 3)} ${d.slice(3, 6)} ${d.slice(6)}`].filter((f) => text.includes(f));
};

describe('the setup-code lockout, in this process on a clock the test moves', () => {
  let app: FastifyInstance | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function serve() {
    dir = mkdtempSync(join(tmpdir(), 'sitegw-lockout-'));
    const file = join(dir, 'site.yaml');
    writeFileSync(file, `${UNCONFIGURED_MARK}\n`);
    const code = newSetupCode();
    const codeFile = saveSetupCode(dir, code);
    let t = 1_000_000;
    app = await buildOnboarding({
      file,
      code,
      codeFile,
      place: { httpHost: '127.0.0.1', httpPort: 0, dataDir: dir },
      done: () => undefined,
      mono: () => t,
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, code, advance: (ms: number) => (t += ms) };
  }

  it('locks at the tenth wrong code, refuses the right one while locked, and lets it in after the minute', async () => {
    const { url, code, advance } = await serve();
    const answers: Answer[] = [];
    for (let i = 0; i < WRONG_CODES - 1; i++) answers.push(await ask(url, wrongOf(code, i)));
    expect(answers.map((a) => a.code)).toEqual(Array(WRONG_CODES - 1).fill('SETUP_CODE_WRONG'));
    const tenth = await ask(url, wrongOf(code, WRONG_CODES));
    answers.push(tenth);
    expect([tenth.status, tenth.code, tenth.retryAfter]).toEqual([429, 'SETUP_CODE_LOCKED', '60']);
    // the right code, typed every way it is taken, wins nothing while the lock holds
    for (const typed of [code, code.replace(/-/g, ''), code.replace(/-/g, ' ')]) {
      const a = await ask(url, typed);
      answers.push(a);
      expect([a.status, a.code]).toEqual([429, 'SETUP_CODE_LOCKED']);
    }
    advance(LOCK_MS - 1);
    const last = await ask(url, code);
    answers.push(last);
    expect([last.status, last.code, last.retryAfter]).toEqual([429, 'SETUP_CODE_LOCKED', '1']);
    advance(1);
    const through = await ask(url, code);
    expect([through.status, through.code]).toEqual([400, 'INVALID_BODY']);
    for (const a of answers) expect(leaks(a.text, code), a.text).toEqual([]);
  });

  it('counts wrong codes in a row: the right one in between starts the count again, and a new lock follows ten more', async () => {
    const { url, code, advance } = await serve();
    for (let i = 0; i < WRONG_CODES - 1; i++) expect((await ask(url, wrongOf(code, i))).status).toBe(403);
    expect((await ask(url, code)).status).toBe(400);
    for (let i = 0; i < WRONG_CODES - 1; i++) expect((await ask(url, wrongOf(code, i))).status).toBe(403);
    expect((await ask(url, wrongOf(code, 99))).status).toBe(429);
    advance(LOCK_MS);
    // after a lock the count starts at nothing: nine more wrong ones do not lock again
    for (let i = 0; i < WRONG_CODES - 1; i++) expect((await ask(url, wrongOf(code, i))).status).toBe(403);
    expect((await ask(url, code)).status).toBe(400);
  });
});

describe.skipIf(!LIBFAKETIME)('the setup-code lockout of `sitegw run` on the placeholder', () => {
  let dir: string;
  let run: PlaceholderRun | undefined;
  afterAll(async () => {
    await run?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds when the wall clock steps a day forward, and neither the answers nor the log carry the code', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sitegw-lockout-run-'));
    const offset = join(dir, 'faketime');
    setFakeClock(offset, Date.now());
    run = await runOnPlaceholder(dir, { SITEGW_LOG_LEVEL: 'debug', ...fakeClockEnv(offset) });
    const { url } = run;
    const code = readFileSync(join(dir, 'data', SETUP_CODE_FILE), 'utf8').trim();
    const answers: Answer[] = [];
    for (let i = 0; i < WRONG_CODES; i++) answers.push(await ask(url, wrongOf(code, i)));
    const before = await ask(url, code);
    answers.push(before);
    expect([before.status, before.code]).toEqual([429, 'SETUP_CODE_LOCKED']);
    // NTP steps the wall clock a day forward (a Pi without a real-time clock): the lock is on a clock that never steps
    const day = Date.now() + 86_400_000;
    setFakeClock(offset, day);
    const seen = await waitFor(
      'the gateway on the stepped clock (its Date header)',
      async () => {
        const a = await ask(url, code);
        answers.push(a);
        return Date.parse(a.date ?? '') > day - 60_000 ? a : undefined;
      },
      20_000,
    );
    expect([seen.status, seen.code]).toEqual([429, 'SETUP_CODE_LOCKED']);
    for (const a of answers) expect(leaks(a.text, code), a.text).toEqual([]);
    // the code is in the one line that gives it to whoever reads the log on the box, in no other
    const out = run.output();
    const lines = out.split('\n').filter((l) => leaks(l, code).length > 0);
    expect(lines.length, out).toBe(1);
    expect(lines[0]).toContain('give the setup code');
  });
});
