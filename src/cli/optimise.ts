/**
 * `sitegw optimise --input case.json`: the cheapest battery plan for one case (docs/optimiser.md),
 * printed as JSON. `--input -` reads the case from stdin. A case that is not JSON, does not match
 * the schema or has no feasible plan ends with one line naming what is wrong, exit 1.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { InvalidCaseError, parseCase } from '../optimiser/case.js';
import { optimise } from '../optimiser/plan.js';
import { InfeasibleCaseError } from '../optimiser/solve.js';
import { EXIT, type Output, printError, printUsage, stdio } from './output.js';

const USAGE = 'sitegw optimise --input FILE|-';
/** a week of 15-minute slots is ~60 kB of JSON; far more than that is not a case */
const MAX_BYTES = 8 * 1024 * 1024;

async function readInput(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_BYTES) throw new InvalidCaseError(`stdin: more than ${MAX_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function optimiseCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { input: { type: 'string' } } });
  if (values.input === undefined || positionals.length > 0) {
    printUsage(io, [USAGE]);
    return EXIT.USAGE;
  }
  const name = values.input === '-' ? 'stdin' : values.input;
  let text: string;
  try {
    text = await readInput(values.input);
  } catch (err) {
    printError(io, 'optimise', `cannot read ${name}: ${(err as Error).message}`);
    return EXIT.USAGE;
  }
  try {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new InvalidCaseError(`${name} is not JSON: ${(err as Error).message}`);
    }
    io.out(`${JSON.stringify(optimise(parseCase(data)))}\n`);
    return EXIT.OK;
  } catch (err) {
    if (err instanceof InvalidCaseError) printError(io, 'optimise', `invalid case: ${err.message}`);
    else if (err instanceof InfeasibleCaseError) printError(io, 'optimise', `no feasible plan: ${err.message}`);
    else throw err;
    return EXIT.FAILURE;
  }
}
