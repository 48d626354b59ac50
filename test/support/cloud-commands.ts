/**
 * A demo gateway uplinked to an in-process broker, and a cloud service's side of one command
 * topic (`{prefix}/cmd/plan`, `{prefix}/cmd/limits`): `send` publishes a payload and returns the
 * answer, after checking it against docs/asyncapi.yaml.
 */
import { expect } from 'vitest';
import { loadContract } from './contract.js';
import { demoSite, waitFor } from './demo.js';
import { aedesBroker, type Collector, collect, type TestBroker } from './mqtt-brokers.js';
import { uplinkTo } from './uplink.js';

export const CLOUD_PREFIX = 'sitegw/demo-site';

export interface CloudCommands {
  demo: Awaited<ReturnType<typeof demoSite>>;
  /** the answer, its shape what the test asserts on */
  send(payload: string): Promise<any>;
  close(): Promise<void>;
}

export async function cloudCommands(command: 'plan' | 'limits', start: number): Promise<CloudCommands> {
  const broker: TestBroker = await aedesBroker();
  const c: Collector = await collect(broker.url, `${CLOUD_PREFIX}/cmd/${command}/response`);
  const demo = await demoSite({ speed: 1, start, ...uplinkTo(broker) });
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
    async close() {
      await demo.cleanup();
      await c.close();
      await broker.close();
    },
  };
}
