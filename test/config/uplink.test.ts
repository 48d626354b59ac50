/** site.yaml `uplink:`: defaults, {siteId}, certificate paths, and the mistakes an installer makes. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[], baseDir = '/etc/sitegw') => parseConfig(text(lines), 'site.yaml', baseDir);
const siteId = () => {
  const r = parse(MINIMAL);
  if (!r.ok) throw new Error('fixture invalid');
  return r.config.site.id;
};

describe('uplink in site.yaml', () => {
  it('is absent unless written', () => {
    const r = parse(MINIMAL);
    expect(r.ok && r.config.uplink).toBe(undefined);
  });

  it('fills every default and puts the site id into clientId and topicPrefix', () => {
    const r = parse(withAppended(['uplink:', '  url: mqtt://broker.lan:1883']));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const id = siteId();
    expect(r.config.uplink).toEqual({
      url: 'mqtt://broker.lan:1883',
      protocolVersion: 5,
      clientId: `sitegw-${id}`,
      topicPrefix: `sitegw/${id}`,
      tls: {},
      keepaliveSeconds: 60,
      reconnectMaxSeconds: 60,
      statusIntervalSeconds: 60,
      publishJitterSeconds: 5,
      outbox: { maxAgeDays: 30, maxMegabytes: 100 },
      replay: { messagesPerSecond: 50, maxInflight: 20 },
    });
  });

  it('takes relative certificate paths from the folder of site.yaml', () => {
    const r = parse(
      withAppended([
        'uplink:',
        '  url: mqtts://broker.example.com:8883',
        '  protocolVersion: 4',
        '  topicPrefix: fleet/{siteId}/gw',
        '  tls:',
        '    ca: mqtt/ca.pem',
        '    cert: /srv/c.pem',
        '    key: mqtt/c.key',
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.uplink!.tls).toEqual({
      ca: '/etc/sitegw/mqtt/ca.pem',
      cert: '/srv/c.pem',
      key: '/etc/sitegw/mqtt/c.key',
    });
    expect(r.config.uplink!.topicPrefix).toBe(`fleet/${siteId()}/gw`);
    expect(r.config.uplink!.protocolVersion).toBe(4);
  });

  it('refuses a URL without an MQTT scheme', () => {
    expectSingleError(parse(withAppended(['uplink:', '  url: broker.example.com:1883'])), {
      path: 'uplink.url',
      line: 17,
      message: /./,
      hint: /mqtts:\/\/broker.example.com:8883/,
    });
    expectSingleError(parse(withAppended(['uplink:', '  url: http://broker'])), {
      path: 'uplink.url',
      line: 17,
      message: /./,
      hint: /write the broker URL with its scheme/,
    });
  });

  it('refuses wildcards and stray slashes in the topic prefix', () => {
    for (const bad of ['sitegw/+', 'a/#', '/sitegw', 'sitegw/', 'a//b']) {
      expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://b', `  topicPrefix: '${bad}'`])), {
        path: 'uplink.topicPrefix',
        line: 18,
        message: /./,
        hint: /without \+ or #/,
      });
    }
  });

  it('refuses certificates on a plain URL and a client certificate without its key', () => {
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://user:pw@b:1883', '  tls:', '    ca: /ca.pem'])), {
      path: 'uplink.tls.ca',
      line: 19,
      message: /does not use TLS/,
      hint: /mqtts:\/\/ or wss:\/\//,
    });
    // credentials in the URL are not echoed back
    expect(
      JSON.stringify(
        errorsOf(parse(withAppended(['uplink:', '  url: mqtt://user:pw@b:1883', '  tls:', '    ca: /ca.pem']))),
      ),
    ).not.toContain('pw@');
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtts://b:8883', '  tls:', '    cert: /c.pem'])), {
      path: 'uplink.tls.key',
      line: 19,
      message: /cert is given without uplink.tls.key/,
      hint: /give both cert and key, or neither/,
    });
  });

  it('names the wrong protocol version and out-of-range bounds', () => {
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://b', '  protocolVersion: 3'])), {
      path: 'uplink.protocolVersion',
      line: 18,
      message: /./,
      hint: /5 for MQTT 5 or 4 for MQTT 3.1.1/,
    });
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://b', '  outbox:', '    maxMegabytes: 0'])), {
      path: 'uplink.outbox.maxMegabytes',
      line: 19,
      message: /./,
      hint: /megabytes between 1 and 10000/,
    });
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://b', '  replay:', '    messagesPerSecond: 0'])), {
      path: 'uplink.replay.messagesPerSecond',
      line: 19,
      message: /./,
      hint: /between 1 and 100000/,
    });
    expectSingleError(parse(withAppended(['uplink:', '  url: mqtt://b', '  colour: red'])), {
      path: 'uplink.colour',
      line: 18,
      message: /unknown key 'colour'/,
      hint: /allowed keys here: url, protocolVersion/,
    });
  });
});
