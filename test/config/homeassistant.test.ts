/** site.yaml `homeassistant:`: defaults, {siteId}, independence from the uplink, and the mistakes an installer makes. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[], baseDir = '/etc/sitegw') => parseConfig(text(lines), 'site.yaml', baseDir);

describe('homeassistant in site.yaml', () => {
  it('is absent unless written, and needs no uplink', () => {
    const none = parse(MINIMAL);
    expect(none.ok && none.config.homeassistant).toBe(undefined);
    const r = parse(withAppended(['homeassistant:', '  url: mqtt://homeassistant.local:1883']));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.uplink).toBe(undefined);
    expect(r.config.homeassistant).toEqual({
      url: 'mqtt://homeassistant.local:1883',
      protocolVersion: 5,
      // not the uplink's client id: a broker serving both would drop one connection for the other
      clientId: 'sitegw-ha-home',
      tls: {},
      keepaliveSeconds: 60,
      reconnectMaxSeconds: 60,
      discoveryPrefix: 'homeassistant',
      stateTopicPrefix: 'sitegw-ha/home',
      stateIntervalSeconds: 10,
    });
  });

  it('sits beside an uplink on another broker, each with its own settings', () => {
    const r = parse(
      withAppended([
        'uplink:',
        '  url: mqtts://cloud.example.com:8883',
        'homeassistant:',
        '  url: mqtt://ha.lan',
        '  discoveryPrefix: ha/disc',
        '  stateIntervalSeconds: 30',
        '  tls: {}',
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.uplink!.url).toBe('mqtts://cloud.example.com:8883');
    expect(r.config.homeassistant).toMatchObject({
      url: 'mqtt://ha.lan',
      discoveryPrefix: 'ha/disc',
      stateIntervalSeconds: 30,
    });
  });

  it('refuses a bad url, discovery prefix, rate and topic prefix with the line and a hint', () => {
    expectSingleError(parse(withAppended(['homeassistant:', '  url: homeassistant.local'])), {
      path: 'homeassistant.url',
      line: 17,
      message: /./,
      hint: /mqtt:\/\/homeassistant.local:1883/,
    });
    for (const bad of ['home assistant', '/homeassistant', 'ha/+', 'ha/']) {
      expectSingleError(parse(withAppended(['homeassistant:', '  url: mqtt://b', `  discoveryPrefix: '${bad}'`])), {
        path: 'homeassistant.discoveryPrefix',
        line: 18,
        message: /./,
        hint: /usually 'homeassistant'/,
      });
    }
    expectSingleError(parse(withAppended(['homeassistant:', '  url: mqtt://b', '  stateIntervalSeconds: 0'])), {
      path: 'homeassistant.stateIntervalSeconds',
      line: 18,
      message: /./,
      hint: /between 1 and 3600, usually 10/,
    });
    expectSingleError(parse(withAppended(['homeassistant:', '  url: mqtt://b', "  stateTopicPrefix: 'a/#'"])), {
      path: 'homeassistant.stateTopicPrefix',
      line: 18,
      message: /./,
      hint: /without \+ or #/,
    });
    expectSingleError(parse(withAppended(['homeassistant:', '  url: mqtt://b', '  topicPrefix: x'])), {
      path: 'homeassistant.topicPrefix',
      line: 18,
      message: /./,
      hint: /stateTopicPrefix/,
    });
  });

  it('refuses certificates on a plain URL, naming its own section', () => {
    expectSingleError(parse(withAppended(['homeassistant:', '  url: mqtt://b:1883', '  tls:', '    ca: /ca.pem'])), {
      path: 'homeassistant.tls.ca',
      line: 19,
      message: /does not use TLS/,
      hint: /remove homeassistant\.tls/,
    });
  });
});
