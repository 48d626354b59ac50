/**
 * The public document a profile (or its control map) follows: title, version and url, as
 * docs/device-profiles.md "The sources rule" asks.
 */
import type { SchemaNode } from '../yaml/schema.js';

export const DOCUMENT_SOURCE = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'version', 'url'],
  hint: 'name the public register document the profile follows: title, version and url',
  properties: {
    title: { type: 'string', minLength: 1, hint: "the document's title" },
    version: {
      type: 'string',
      minLength: 1,
      hint: "the document's version or issue, e.g. 'V1.5' or 'Issue 05 (2023-02-16)'",
    },
    url: { type: 'string', pattern: '^https?://', hint: 'where the document can be read, an http(s) address' },
    notes: { type: 'string', hint: 'free text' },
  },
} as const satisfies SchemaNode;
