/**
 * Home Assistant's documented MQTT discovery schema, as far as the gateway uses it, written
 * from Home Assistant's documentation (home-assistant.io repository): source/_integrations/
 * mqtt.markdown ("Discovery topic", "Discovery payload", origin), sensor.mqtt.markdown and
 * binary_sensor.mqtt.markdown, select.mqtt.markdown, number.mqtt.markdown (configuration variables, `device` keys), the sensor device
 * classes with their units (sensor.markdown "Device class"), the binary sensor device classes
 * (binary_sensor.markdown) and the state classes (developers.home-assistant.io, sensor entity
 * "Available state classes"). It checks a config the way Home Assistant would, independently of
 * the code that builds it.
 */
const ID = /^[a-zA-Z0-9_-]+$/;

const COMMON = [
  'availability',
  'availability_mode',
  'availability_template',
  'availability_topic',
  'device',
  'device_class',
  'enabled_by_default',
  'encoding',
  'entity_category',
  'entity_picture',
  'expire_after',
  'force_update',
  'icon',
  'json_attributes_template',
  'json_attributes_topic',
  'name',
  'object_id',
  'default_entity_id',
  'payload_available',
  'payload_not_available',
  'qos',
  'state_topic',
  'unique_id',
  'value_template',
  'origin',
];
const KEYS: Record<string, Set<string>> = {
  sensor: new Set([
    ...COMMON,
    'last_reset_value_template',
    'options',
    'suggested_display_precision',
    'state_class',
    'unit_of_measurement',
  ]),
  binary_sensor: new Set([...COMMON, 'off_delay', 'payload_off', 'payload_on']),
  // no device_class, expire_after, force_update; state_topic optional; options and command_topic required
  select: new Set([
    ...COMMON.filter((k) => !['device_class', 'expire_after', 'force_update'].includes(k)),
    'command_template',
    'command_topic',
    'optimistic',
    'options',
    'retain',
  ]),
  // number.mqtt.markdown: no expire_after, force_update; command_topic required; min/max/step numbers
  number: new Set([
    ...COMMON.filter((k) => !['expire_after', 'force_update'].includes(k)),
    'command_template',
    'command_topic',
    'max',
    'min',
    'mode',
    'optimistic',
    'payload_reset',
    'retain',
    'step',
    'unit_of_measurement',
  ]),
};
/**
 * The device keys Home Assistant 2024.2's MQTT discovery accepts (the oldest release the gateway
 * supports: 2024.1 refused serial_number, home-assistant/core#108069); a key outside these fails
 * the whole config on an older release, as device keys are not ignored.
 */
export const DEVICE_KEYS_2024_2: readonly string[] = [
  'configuration_url',
  'connections',
  'hw_version',
  'identifiers',
  'manufacturer',
  'model',
  'name',
  'serial_number',
  'suggested_area',
  'sw_version',
  'via_device',
];
/** and model_id, which later releases added (the gateway does not send it) */
const DEVICE_KEYS = new Set([...DEVICE_KEYS_2024_2, 'model_id']);
const ORIGIN_KEYS = new Set(['name', 'sw_version', 'support_url']);
/** sensor device classes the gateway could use, with their documented units */
export const SENSOR_UNITS: Record<string, string[]> = {
  power: ['mW', 'W', 'kW', 'MW', 'GW', 'TW'],
  energy: ['J', 'kJ', 'MJ', 'GJ', 'mWh', 'Wh', 'kWh', 'MWh', 'GWh', 'TWh', 'cal', 'kcal', 'Mcal', 'Gcal'],
  battery: ['%'],
  current: ['A', 'mA'],
  frequency: ['Hz', 'kHz', 'MHz', 'GHz'],
  temperature: ['°C', '°F', 'K'],
  voltage: ['V', 'mV', 'µV', 'kV', 'MV'],
};
const STATE_CLASSES = ['measurement', 'measurement_angle', 'total', 'total_increasing'];
const BINARY_CLASSES = [
  'battery',
  'battery_charging',
  'carbon_monoxide',
  'cold',
  'connectivity',
  'door',
  'garage_door',
  'gas',
  'heat',
  'light',
  'lock',
  'moisture',
  'motion',
  'moving',
  'occupancy',
  'opening',
  'plug',
  'power',
  'presence',
  'problem',
  'running',
  'safety',
  'smoke',
  'sound',
  'tamper',
  'update',
  'vibration',
  'window',
];

/** The problems Home Assistant would have with one retained discovery message; [] when none. */
export function discoveryProblems(topic: string, payload: string, discoveryPrefix: string): string[] {
  const out: string[] = [];
  const levels = topic.split('/');
  const pre = discoveryPrefix.split('/').length;
  const [component, ...ids] = levels.slice(pre);
  if (
    levels.slice(0, pre).join('/') !== discoveryPrefix ||
    levels.at(-1) !== 'config' ||
    (ids.length !== 2 && ids.length !== 3)
  )
    out.push(`topic ${topic} is not <prefix>/<component>/[<node_id>/]<object_id>/config`);
  for (const id of ids.slice(0, -1)) if (!ID.test(id)) out.push(`id '${id}' has characters outside [a-zA-Z0-9_-]`);
  const keys = KEYS[component ?? ''];
  if (!keys) return [...out, `component ${component} is not sensor, binary_sensor, select or number`];
  let c: Record<string, any>;
  try {
    c = JSON.parse(payload);
  } catch {
    return [...out, 'payload is not JSON'];
  }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return [...out, 'payload is not a JSON object'];
  for (const k of Object.keys(c)) if (!keys.has(k)) out.push(`unknown key ${k}`);
  if (typeof c.state_topic !== 'string' || c.state_topic === '' || /[+#]/.test(c.state_topic))
    out.push('state_topic (required) missing or a wildcard');
  if (component === 'select') {
    if (typeof c.command_topic !== 'string' || c.command_topic === '' || /[+#]/.test(c.command_topic))
      out.push('command_topic (required) missing or a wildcard');
    if (!Array.isArray(c.options) || c.options.length === 0 || c.options.some((o: unknown) => typeof o !== 'string'))
      out.push('options (required) not a list of strings');
  }
  if (component === 'number') {
    if (typeof c.command_topic !== 'string' || c.command_topic === '' || /[+#]/.test(c.command_topic))
      out.push('command_topic (required) missing or a wildcard');
    for (const k of ['min', 'max', 'step'])
      if (c[k] !== undefined && !Number.isFinite(c[k])) out.push(`${k} not a number`);
    if ((c.min ?? 1) > (c.max ?? 100)) out.push('min above max');
    if (c.mode !== undefined && !['auto', 'box', 'slider'].includes(c.mode)) out.push(`mode ${c.mode}`);
    // number.markdown "Device class": battery in %, power in mW, W, kW, MW, GW, TW (and BTU/h)
    if (c.device_class !== undefined && !['battery', 'power'].includes(c.device_class))
      out.push(`number device_class ${c.device_class} not among the checked ones`);
    if (c.device_class === 'battery' && c.unit_of_measurement !== '%') out.push('a battery number is in %');
    if (c.device_class === 'power' && ![...SENSOR_UNITS.power!, 'BTU/h'].includes(c.unit_of_measurement))
      out.push(`unit ${c.unit_of_measurement} is not one of a power number's`);
  }
  if (typeof c.unique_id !== 'string' || c.unique_id === '') out.push('unique_id missing (required with a device)');
  const d = c.device;
  if (typeof d !== 'object' || d === null) out.push('device missing');
  else {
    for (const k of Object.keys(d)) if (!DEVICE_KEYS.has(k)) out.push(`unknown device key ${k}`);
    if (!(Array.isArray(d.identifiers) ? d.identifiers.length > 0 : typeof d.identifiers === 'string'))
      out.push('device.identifiers missing');
  }
  if (c.origin !== undefined) {
    if (typeof c.origin.name !== 'string') out.push('origin.name (required) missing');
    for (const k of Object.keys(c.origin)) if (!ORIGIN_KEYS.has(k)) out.push(`unknown origin key ${k}`);
  }
  if (c.availability !== undefined) {
    if (!Array.isArray(c.availability) || c.availability.some((a: any) => typeof a?.topic !== 'string'))
      out.push('availability entries need a topic');
    if (c.availability_topic !== undefined) out.push('availability and availability_topic together');
  }
  if (c.availability_mode !== undefined && !['all', 'any', 'latest'].includes(c.availability_mode))
    out.push(`availability_mode ${c.availability_mode}`);
  if (
    c.entity_category !== undefined &&
    c.entity_category !== 'diagnostic' &&
    !(['binary_sensor', 'select', 'number'].includes(component!) && c.entity_category === 'config')
  )
    out.push(`entity_category ${c.entity_category}`);
  if (component === 'sensor') {
    // sensor.markdown "Device class" enum: the states are the options, no unit and no state class
    // (Home Assistant refuses the entity otherwise); options belong to enum sensors only
    if (c.device_class === 'enum') {
      if (!Array.isArray(c.options) || c.options.length === 0 || c.options.some((o: unknown) => typeof o !== 'string'))
        out.push('an enum sensor needs options, a list of strings');
      if (c.unit_of_measurement !== undefined || c.state_class !== undefined)
        out.push('an enum sensor has no unit_of_measurement or state_class');
    } else if (c.options !== undefined) out.push('options only with device_class enum');
    if (c.device_class !== undefined && c.device_class !== 'enum') {
      const units = SENSOR_UNITS[c.device_class];
      if (!units) out.push(`sensor device_class ${c.device_class} not among the checked ones`);
      else if (!units.includes(c.unit_of_measurement))
        out.push(`unit ${c.unit_of_measurement} is not one of ${c.device_class}'s: ${units.join(', ')}`);
    }
    if (c.state_class !== undefined && !STATE_CLASSES.includes(c.state_class)) out.push(`state_class ${c.state_class}`);
    if (c.device_class === 'energy' && !['total', 'total_increasing'].includes(c.state_class))
      out.push('an energy sensor needs state_class total or total_increasing (Energy dashboard)');
    if (c.suggested_display_precision !== undefined && !Number.isInteger(c.suggested_display_precision))
      out.push('suggested_display_precision not an integer');
  } else if (
    component === 'binary_sensor' &&
    c.device_class !== undefined &&
    !BINARY_CLASSES.includes(c.device_class)
  ) {
    out.push(`binary_sensor device_class ${c.device_class}`);
  }
  return out;
}
