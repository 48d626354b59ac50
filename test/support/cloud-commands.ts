/**
 * A demo gateway uplinked to an in-process broker, and a cloud service's side of one command
 * topic (`{prefix}/cmd/plan`, `{prefix}/cmd/limits`): `send` publishes a payload and returns the
 * answer, after checking it against docs/asyncapi.yaml.
 */
import { expect } from 'vitest';
import type { UplinkConfig } from '../../src/config/types.js';
import { loadContract } from './contract.js';
import { demoSite, waitFor } from './demo.js';
import { aedesBroker, type Collector, collect, type TestBroker } from './mqtt-brokers.js';
import { uplinkTo } from './uplink.js';

export const CLOUD_PREFIX = 'sitegw/demo-site';

export interface CloudCommands {
  demo: Awaited<ReturnType<typeof demoSite>>;
  /** the answer, its shape what the test asserts on */
  send(payload: string): Promise<any>;
  /** the next status message (`{prefix}/status`) `pick` accepts, checked against docs/asyncapi.yaml */
  status(pick: (body: any) => boolean): Promise<any>;
  close(): Promise<void>;
}

export async function cloudCommands(
  command: 'plan' | 'limits',
  start: number,
  uplink: Partial<UplinkConfig> = {},
): Promise<CloudCommands> {
  const broker: TestBroker = await aedesBroker();
  const c: Collector = await collect(broker.url, `${CLOUD_PREFIX}/cmd/${command}/response`);
  const statuses: Collector = await collect(broker.url, `${CLOUD_PREFIX}/status`);
  const demo = await demoSite({ speed: 1, start, ...uplinkTo(broker, uplink) });
  await waitFor('the uplink connected', () => demo.daemon.uplink!.health().connection.connected);
  let n = 0;
  return {
    demo,
    async send(payload) {
      const before = c.messages.length;
      n++;
      await c.client.publishAsync(`${CLOUD_PREFIX}/cmd/${command}`, payload, { qos: 1 });
      const m = await waitFor(`${command} answer ${n}`, () => c.messages[before]);
      const body = JSON.parse(m.payload);
      expect(loadContract(CLOUD_PREFIX).check(m.topic, body)).toEqual([]);
      return body;
    },
    async status(pick) {
      const m = await waitFor(
        'a status message',
        () => statuses.messages.find((x) => pick(JSON.parse(x.payload))),
        30_000,
      );
      const body = JSON.parse(m.payload);
      expect(loadContract(CLOUD_PREFIX).check(m.topic, body)).toEqual([]);
      return body;
    },
    async close() {
      await demo.cleanup();
      await statuses.close();
      await c.close();
      await broker.close();
    },
  };
}
