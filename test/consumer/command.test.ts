/** `sitegw consume` as a process: its argument mistakes, and a start and clean stop against mosquitto. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConsumerStore } from '../../src/consumer/store.js';
import { ROOT, sitegwCommand } from '../support/cli.js';
import { waitFor } from '../support/demo.js';
import { freePort, MOSQUITTO, mosquittoBroker, type TestBroker } from '../support/mqtt-brokers.js';
import { SKIP_POSTGRES, startPostgres, type TestPostgres } from '../support/postgres.js';

const sitegw = (args: string[]) => spawnSync(...sitegwCommand(args), { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'sitegw-consume-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sitegw consume', () => {
  it('names what is wrong with its arguments and exits 2', () => {
    const none = sitegw(['consume']);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/--broker URL is required/);
    const wait = sitegw(['consume', '--broker', 'mqtt://127.0.0.1:1', '--gap-wait', 'soon']);
    expect(wait.status).toBe(2);
    expect(wait.stderr).toMatch(/--gap-wait must be seconds/);
    const group = sitegw(['consume', '--broker', 'mqtt://127.0.0.1:1', '--group', 'a/b']);
    expect(group.status).toBe(2);
    expect(group.stderr).toMatch(/--group must be one topic level/);
    const both = sitegw(['consume', '--broker', 'mqtt://127.0.0.1:1', '--db', 'x.db', '--postgres', 'postgres://h/db']);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/give --db FILE or --postgres URL, not both/);
    const notUrl = sitegw(['consume', '--broker', 'mqtt://127.0.0.1:1', '--postgres', 'cloud.db']);
    expect(notUrl.status).toBe(2);
    expect(notUrl.stderr).toMatch(/--postgres takes a URL postgres:\/\/user@host:port\/database, got 'cloud.db'/);
  });

  it('says which PostgreSQL it cannot reach, without its password, and exits 1', async () => {
    const url = `postgres://cloud:hunter2@127.0.0.1:${await freePort()}/fleet`;
    const r = sitegw(['consume', '--broker', 'mqtt://127.0.0.1:1', '--postgres', url]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^sitegw consume: PostgreSQL at postgres:\/\/cloud:\*\*\*@127\.0\.0\.1:\d+\/fleet: .*ECONNREFUSED/,
    );
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  describe.skipIf(!MOSQUITTO)('against mosquitto', () => {
    let broker: TestBroker;
    afterAll(async () => broker?.close());

    it('subscribes with a shared subscription, creates its database and stops cleanly on SIGTERM', async () => {
      broker = await mosquittoBroker();
      const db = join(dir, 'c.db');
      const child = spawn(...sitegwCommand(['consume', '--broker', broker.url, '--group', 'g1', '--db', db]), {
        cwd: ROOT,
      });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      await waitFor('consuming', () => out.includes('consuming') || undefined, 30_000);
      expect(out).toContain('consuming $share/g1/sitegw/+/');
      const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(out).toMatch(/"received":0/);
      const s = await ConsumerStore.open(db);
      expect(await s.siteCounts()).toEqual([]);
      await s.close();
    });

    describe.skipIf(SKIP_POSTGRES)('into PostgreSQL', () => {
      let server: TestPostgres;
      afterAll(async () => server?.close());

      it('creates its tables in the database of --postgres, prints the URL without its password, and stops cleanly', async () => {
        server = await startPostgres();
        // the throwaway server trusts every login, so the password is only there to be hidden
        const url = (await server.newDatabase()).replace('sitegw@', 'sitegw:hunter2@');
        const child = spawn(...sitegwCommand(['consume', '--broker', broker.url, '--group', 'g2', '--postgres', url]), {
          cwd: ROOT,
        });
        let out = '';
        child.stdout.on('data', (d) => (out += String(d)));
        await waitFor('consuming', () => out.includes('consuming') || undefined, 30_000);
        expect(out).toMatch(/into postgres:\/\/sitegw:\*\*\*@127\.0\.0\.1:\d+\/t\d+\n/);
        expect(out).not.toContain('hunter2');
        const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
        child.kill('SIGTERM');
        expect(await exit).toBe(0);
        const s = await ConsumerStore.open(url);
        expect(await s.siteCounts()).toEqual([]);
        expect(await s.holes()).toEqual([]);
        await s.close();
      });
    });
  });
});
