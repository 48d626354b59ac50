/**
 * The XML of IEEE 2030.5 bodies: a small strict parser into elements with resolved namespaces, and
 * a writer. Every body a server sends is validated against the schemas (validate.ts) before it is
 * read here, so this parser only needs the XML those schemas allow (elements, attributes, text,
 * the five named entities and character references, comments, CDATA); it still refuses anything
 * it cannot read with an XmlError naming the line, never a crash, because the order may change.
 */

export const SEP_NS = 'urn:ieee:std:2030.5:ns';
export const CSIPAUS_NS = 'https://csipaus.org/ns';

export interface XmlElement {
  /** namespace URI ('' for none) */
  ns: string;
  /** local name, without prefix */
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** the element's own text, entities resolved, trimmed */
  text: string;
}

export class XmlError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
    this.name = 'XmlError';
  }
}

const NAME = /[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?/y;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** bodies are small (a page of controls); a larger one is refused before it is parsed */
export const MAX_XML_BYTES = 1 << 20;
const MAX_DEPTH = 32;

function decode(raw: string, line: () => number): string {
  return raw.replace(/&([^;&\s]{1,10});/g, (_, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff)
        throw new XmlError(`bad character reference &${ref};`, line());
      return String.fromCodePoint(code);
    }
    const v = ENTITIES[ref];
    if (v === undefined) throw new XmlError(`unknown entity &${ref};`, line());
    return v;
  });
}

/** Parses one document; throws XmlError for anything that is not well-formed. */
export function parseXml(text: string): XmlElement {
  if (text.length > MAX_XML_BYTES) throw new XmlError(`body larger than ${MAX_XML_BYTES} bytes`, 1);
  let i = 0;
  const line = () => {
    let n = 1;
    for (let k = 0; k < i && k < text.length; k++) if (text.charCodeAt(k) === 10) n++;
    return n;
  };
  const fail = (m: string): never => {
    throw new XmlError(m, line());
  };
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) return fail('expected a name');
    i += m[0].length;
    return m[0];
  };
  const skipMisc = () => {
    for (;;) {
      skipSpace();
      if (text.startsWith('<?', i)) {
        const end = text.indexOf('?>', i);
        if (end < 0) fail('unterminated <?');
        i = end + 2;
      } else if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i);
        if (end < 0) fail('unterminated comment');
        i = end + 3;
      } else if (text.startsWith('<!', i)) {
        fail('a DOCTYPE or declaration is not allowed');
      } else return;
    }
  };

  const element = (scope: Map<string, string>, depth: number): XmlElement => {
    if (depth > MAX_DEPTH) fail(`elements nested deeper than ${MAX_DEPTH}`);
    if (text[i] !== '<') fail('expected an element');
    i++;
    const qname = name();
    const raw: Record<string, string> = {};
    for (;;) {
      skipSpace();
      if (text.startsWith('/>', i) || text[i] === '>') break;
      const attr = name();
      skipSpace();
      if (text[i] !== '=') fail(`expected = after attribute ${attr}`);
      i++;
      skipSpace();
      const q = text[i];
      if (q !== '"' && q !== "'") return fail(`attribute ${attr} is not quoted`);
      const end = text.indexOf(q, i + 1);
      if (end < 0) fail(`unterminated attribute ${attr}`);
      const value = text.slice(i + 1, end);
      if (value.includes('<')) fail(`'<' in attribute ${attr}`);
      if (attr in raw) fail(`attribute ${attr} given twice`);
      raw[attr] = decode(value, line);
      i = end + 1;
    }
    const inner = new Map(scope);
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (k === 'xmlns') inner.set('', v);
      else if (k.startsWith('xmlns:')) inner.set(k.slice(6), v);
    }
    for (const [k, v] of Object.entries(raw)) {
      if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
      // schema attributes here are unprefixed; a prefixed one (xsi:schemaLocation) is kept by its local name
      attrs[k.includes(':') ? k.slice(k.indexOf(':') + 1) : k] = v;
    }
    const colon = qname.indexOf(':');
    const prefix = colon < 0 ? '' : qname.slice(0, colon);
    const ns = inner.get(prefix);
    if (ns === undefined && prefix !== '') fail(`undeclared namespace prefix ${prefix}`);
    const el: XmlElement = {
      ns: ns ?? '',
      name: colon < 0 ? qname : qname.slice(colon + 1),
      attrs,
      children: [],
      text: '',
    };
    if (text.startsWith('/>', i)) {
      i += 2;
      return el;
    }
    i++;
    let content = '';
    for (;;) {
      if (i >= text.length) fail(`element ${qname} is not closed`);
      if (text.startsWith('</', i)) {
        i += 2;
        const closing = name();
        if (closing !== qname) fail(`</${closing}> closes <${qname}>`);
        skipSpace();
        if (text[i] !== '>') fail(`expected > after </${closing}`);
        i++;
        el.text = content.trim();
        return el;
      }
      if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i);
        if (end < 0) fail('unterminated comment');
        i = end + 3;
      } else if (text.startsWith('<![CDATA[', i)) {
        const end = text.indexOf(']]>', i);
        if (end < 0) fail('unterminated CDATA');
        content += text.slice(i + 9, end);
        i = end + 3;
      } else if (text[i] === '<') {
        el.children.push(element(inner, depth + 1));
      } else {
        const next = text.indexOf('<', i);
        const end = next < 0 ? text.length : next;
        content += decode(text.slice(i, end), line);
        i = end;
      }
    }
  };

  if (text.charCodeAt(0) === 0xfeff) i = 1;
  skipMisc();
  const root = element(new Map(), 0);
  skipMisc();
  if (i < text.length) fail('content after the document element');
  return root;
}

/** The first child of `el` with this local name (and namespace, the 2030.5 one by default). */
export function child(el: XmlElement | undefined, name: string, ns = SEP_NS): XmlElement | undefined {
  return el?.children.find((c) => c.name === name && c.ns === ns);
}

export function childrenNamed(el: XmlElement | undefined, name: string, ns = SEP_NS): XmlElement[] {
  return el?.children.filter((c) => c.name === name && c.ns === ns) ?? [];
}

/** The text of the child `name`, or undefined when absent. */
export function textOf(el: XmlElement | undefined, name: string, ns = SEP_NS): string | undefined {
  return child(el, name, ns)?.text;
}

// ---- writing

const ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };
export const escapeXml = (s: string): string => s.replace(/[<>&"']/g, (c) => ESCAPES[c]!);

/** A node to write: [name, attributes, ...children], a child being a node or text. Undefined children are left out. */
export type XmlNode = [
  string,
  Record<string, string | number | undefined>,
  ...(XmlNode | string | number | undefined)[],
];

export function writeXml(node: XmlNode): string {
  const [name, attrs, ...children] = node;
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
  const inner = children
    .filter((c) => c !== undefined)
    .map((c) => (Array.isArray(c) ? writeXml(c) : escapeXml(String(c))))
    .join('');
  return inner === '' ? `<${name}${a}/>` : `<${name}${a}>${inner}</${name}>`;
}
