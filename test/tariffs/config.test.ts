import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended } from '../config/fixtures.js';

// MINIMAL has 15 lines, so `tariff:` is line 16 and its first key line 17
const withTariff = (...lines: string[]) => parseConfig(text(withAppended(['tariff:', ...lines])));

describe('site.yaml tariff section', () => {
  it('is optional', () => {
    const r = parseConfig(text(MINIMAL));
    expect(r.ok && r.config.tariff).toBeUndefined();
  });

  it('flat: exportPrice defaults to 0', () => {
    const r = withTariff('  type: flat', '  importPrice: 0.32');
    expect(r.ok && r.config.tariff).toEqual({ type: 'flat', importPrice: 0.32, exportPrice: 0 });
  });

  it('time-of-use: days default to every day, unquoted times are read as text, a night period runs past midnight', () => {
    const r = withTariff(
      '  type: time-of-use',
      '  periods:',
      '    - { from: 07:00, to: 22:00, importPrice: 0.35, exportPrice: 0.08 }',
      "    - { from: '22:00', to: '07:00', importPrice: 0.22 }",
    );
    expect(r.ok && r.config.tariff).toEqual({
      type: 'time-of-use',
      periods: [
        {
          from: '07:00',
          to: '22:00',
          importPrice: 0.35,
          exportPrice: 0.08,
          days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        },
        {
          from: '22:00',
          to: '07:00',
          importPrice: 0.22,
          exportPrice: 0,
          days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        },
      ],
    });
  });

  it('time-of-use: weekdays and weekend apart, 24:00 as an end', () => {
    const r = withTariff(
      '  type: time-of-use',
      '  periods:',
      "    - { days: [mon, tue, wed, thu, fri], from: '00:00', to: '24:00', importPrice: 0.35 }",
      "    - { days: [sat, sun], from: '00:00', to: '24:00', importPrice: 0.25 }",
    );
    expect(r.ok).toBe(true);
  });

  it('dynamic: names a stored tariff', () => {
    const r = withTariff('  type: dynamic', '  tariffId: 3f0c6a52-9a4e-4c1e-8d0b-5b7e2f6f1a90');
    expect(r.ok && r.config.tariff).toEqual({ type: 'dynamic', tariffId: '3f0c6a52-9a4e-4c1e-8d0b-5b7e2f6f1a90' });
  });

  it('an unknown type names the choices', () => {
    expectSingleError(withTariff('  type: tou'), {
      path: 'tariff.type',
      line: 17,
      message: /one of: flat, time-of-use, dynamic, got 'tou'/,
      hint: /type: flat/,
    });
  });

  it('a flat tariff without importPrice, a quoted price, an absurd price', () => {
    expectSingleError(withTariff('  type: flat'), {
      path: 'tariff.importPrice',
      line: 16,
      message: /required key 'importPrice'/,
      hint: /per kWh/,
    });
    expectSingleError(withTariff('  type: flat', '  importPrice: "0.3"'), {
      path: 'tariff.importPrice',
      line: 18,
      message: /must be a number, got '0.3'/,
      hint: /without quotes/,
    });
    expectSingleError(withTariff('  type: flat', '  importPrice: 1e9'), {
      path: 'tariff.importPrice',
      line: 18,
      message: /at most 1000000/,
      hint: /per kWh/,
    });
  });

  it('times off the quarter hour, 24:00 as a start, an unknown day, an unknown key', () => {
    const tou = (period: string) => withTariff('  type: time-of-use', '  periods:', `    - ${period}`);
    expectSingleError(tou("{ from: '07:10', to: '24:00', importPrice: 0.3 }"), {
      path: 'tariff.periods[0].from',
      line: 19,
      message: /expected form, got '07:10'/,
      hint: /quarter hour/,
    });
    expectSingleError(tou("{ from: '24:00', to: '07:00', importPrice: 0.3 }"), {
      path: 'tariff.periods[0].from',
      line: 19,
      message: /got '24:00'/,
      hint: /'HH:MM'/,
    });
    expectSingleError(tou("{ days: [mon, funday], from: '00:00', to: '24:00', importPrice: 0.3 }"), {
      path: 'tariff.periods[0].days[1]',
      line: 19,
      message: /one of: mon, tue, wed, thu, fri, sat, sun, got 'funday'/,
      hint: /.+/,
    });
    expectSingleError(tou("{ from: '00:00', to: '24:00', importPrice: 0.3, price: 1 }"), {
      path: 'tariff.periods[0].price',
      line: 19,
      message: /unknown key 'price'/,
      hint: /importPrice/,
    });
  });

  it('time-of-use periods must cover the week once: a gap names where it is', () => {
    const r = withTariff(
      '  type: time-of-use',
      '  periods:',
      "    - { days: [mon, tue, wed, thu, fri], from: '00:00', to: '24:00', importPrice: 0.35 }",
    );
    expectSingleError(r, {
      path: 'tariff.periods',
      line: 18,
      message: /no period covers sat 00:00 to the end of sun/,
      hint: /every quarter hour of the week/,
    });
    const night = withTariff(
      '  type: time-of-use',
      '  periods:',
      "    - { from: '07:00', to: '22:00', importPrice: 0.35 }",
      "    - { from: '22:00', to: '06:00', importPrice: 0.2 }",
    );
    expectSingleError(night, {
      path: 'tariff.periods',
      line: 18,
      message: /no period covers mon 06:00 to mon 07:00/,
      hint: /add a period/,
    });
  });

  it('an overlap names both periods and a moment they share; a period running past midnight overlaps the next day', () => {
    const r = withTariff(
      '  type: time-of-use',
      '  periods:',
      "    - { from: '00:00', to: '24:00', importPrice: 0.3, days: [mon, tue, wed, thu, fri, sat] }",
      "    - { from: '00:00', to: '24:00', importPrice: 0.2, days: [sun] }",
      "    - { from: '23:00', to: '01:00', importPrice: 0.1, days: [sun] }",
    );
    const errors = errorsOf(r);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toBe('tariff.periods[2]');
    expect(errors[0]!.line).toBe(21);
    // sun 23:00 is periods[1]'s; the first shared quarter hour is sun 23:00
    expect(errors[0]!.message).toBe('overlaps periods[1] (both apply on sun 23:00)');
  });

  it('an empty period says how to write a whole day', () => {
    const r = withTariff(
      '  type: time-of-use',
      '  periods:',
      "    - { from: '00:00', to: '24:00', importPrice: 0.3 }",
      "    - { from: '08:00', to: '08:00', importPrice: 0.3 }",
    );
    expectSingleError(r, {
      path: 'tariff.periods[1].to',
      line: 20,
      message: /same time as from/,
      hint: /'00:00' and to: '24:00'/,
    });
  });

  it('a dynamic tariff id with characters no generated id has', () => {
    expectSingleError(withTariff('  type: dynamic', '  tariffId: "a b"'), {
      path: 'tariff.tariffId',
      line: 18,
      message: /expected form/,
      hint: /POST \/api\/v1\/dynamicTariffs/,
    });
  });
});
