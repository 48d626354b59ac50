/**
 * The Energy Site API specification, section by section, against the real demo daemon over
 * real sockets: one test per rule and per table row, named after the spec's headings. Where a
 * rule needs a long scenario that another test file already runs, the test here names that
 * test and checks that it still exists (`coveredBy`), so every rule is reachable from this file.
 * Decisions where the spec is silent (design.md) are at the end, under "Decisions".
 */
import { afterAll, beforeAll } from 'vitest';
import { specAuthEvents } from './spec/auth-events.js';
import { startDemo, stopDemo } from './spec/context.js';
import { specDecisions } from './spec/decisions.js';
import { specEndpoints } from './spec/endpoints.js';
import { specResources } from './spec/resources.js';

beforeAll(startDemo, 120_000);
afterAll(stopDemo);

specResources();
specEndpoints();
specAuthEvents();
specDecisions();
