/**
 * site.yaml `gridOperator:`: the grid operator's dynamic limits, over CSIP-AUS (IEEE 2030.5 with
 * the csipaus extensions) first (docs/grid-operator.md). The files are the device certificate the
 * distributor's CA issued, its private key and the CA that signs the distributor's server.
 */
import type { SchemaNode } from '../yaml/schema.js';

const file = (description: string, hint: string) =>
  ({ type: 'string', description, minLength: 1, hint }) as const satisfies SchemaNode;

export const GRID_OPERATOR = {
  type: 'object',
  description: "the grid operator's dynamic limits over CSIP-AUS (docs/grid-operator.md)",
  additionalProperties: false,
  required: ['protocol', 'discoveryUrl', 'certificate', 'key', 'nmi'],
  hint: 'give protocol, discoveryUrl, certificate, key and nmi (docs/grid-operator.md)',
  properties: {
    protocol: {
      type: 'string',
      description: "the grid operator's protocol; csip-aus (IEEE 2030.5 with the CSIP-AUS extensions) for now",
      enum: ['csip-aus'],
      hint: 'write csip-aus',
    },
    discoveryUrl: {
      type: 'string',
      description: "the server's DeviceCapability URL, as the distributor gives it (https://…/dcap)",
      pattern: '^https://[^\\s/]+(/\\S*)?$',
      hint: 'write the https:// URL the distributor gave, e.g. https://csip.example-distributor.com.au/api/v2/dcap',
    },
    certificate: file(
      "the device certificate in PEM (the distributor's CA issued it from your CSR); a chain may follow it in the same file",
      'give the path of the PEM file, e.g. /etc/sitegw/csip/device.pem (a relative path is taken from the folder of site.yaml)',
    ),
    key: file(
      "the certificate's private key in PEM, unencrypted, readable only by the sitegw user",
      'give the path of the key made with the CSR, e.g. /etc/sitegw/csip/device.key',
    ),
    ca: file(
      "the CA certificate(s) that sign the distributor's server, in PEM; left out, the system's CAs",
      "give the path of the distributor's CA file, e.g. /etc/sitegw/csip/serca.pem",
    ),
    nmi: {
      type: 'string',
      description:
        'the National Metering Identifier of the connection point (on the electricity bill), sent as the csipaus ConnectionPoint',
      // AEMO's NMI Procedure: 10 characters, digits and capitals except I and O, with an optional 11th check digit
      pattern: '^[0-9A-HJ-NP-Z]{10}[0-9]?$',
      hint: "write the site's 10-character NMI from the electricity bill, e.g. 4102345678 (capitals, no I or O)",
    },
    pollSeconds: {
      type: 'integer',
      description:
        "how often a resource is read again when the server gives it no pollRate; a server's pollRate is followed, but never more often than every 5 s",
      default: 60,
      minimum: 5,
      maximum: 3600,
      hint: 'use whole seconds between 5 and 3600, usually 60',
    },
    pen: {
      type: 'integer',
      description:
        "an IANA Private Enterprise Number for the low 32 bits of the mRIDs sitegw makes (its MirrorUsagePoints and readings), as IEEE 2030.5's mRIDType asks; 0 unless the distributor names one",
      default: 0,
      minimum: 0,
      maximum: 4294967295,
      hint: "write the number the distributor or the installer's company registered with IANA, e.g. 62345, or leave it out",
    },
  },
} as const satisfies SchemaNode;
