import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  checkpointDecoding,
  DECODINGS,
  type Decoding,
  isDecoding,
  type ParsedCheckpoint,
} from "../model/checkpoint";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * A CLI's usage: the header comment of its source file (the first one that shows `npm run`),
 * without the comment markers. A bundle (scripts/gpu/pack.sh) has lost it: then say where it is.
 */
export function usageOf(moduleUrl: string): string {
  const path = fileURLToPath(moduleUrl);
  const source = readFileSync(path, "utf8");
  for (const m of source.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const header = m[1] as string;
    if (header.includes("npm run"))
      return header
        .split("\n")
        .map((line) => line.replace(/^\s*\* ?/, ""))
        .join("\n")
        .trim();
  }
  const name = basename(path).replace(/\.[cm]?[jt]s$/, "");
  return `usage: see the header comment of src/cli/${name}.ts (a bundle keeps no comments)`;
}

/**
 * Parses a CLI's options. `--help` (or `-h`) prints its usage (and `more`) and exits 0; an unknown or malformed
 * option prints what is wrong, then the usage, and exits 2 (no stack trace).
 */
export function parseCli<const O extends Options>(
  moduleUrl: string,
  options: O,
  more?: () => string,
) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usageOf(moduleUrl));
    if (more) console.log(`\n${more()}`);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${usageOf(moduleUrl)}`);
    process.exit(2);
  }
}

/**
 * The decoding a CLI uses: `--grammar` (shorthand for `--decoding grammar`), else `--decoding
 * free|grammar`, else what the checkpoint's meta asks for (free when it says nothing).
 */
export function chosenDecoding(
  v: { grammar?: unknown; decoding?: unknown },
  checkpoint: ParsedCheckpoint,
): Decoding {
  if (v.grammar === true) return "grammar";
  return v.decoding === undefined ? checkpointDecoding(checkpoint) : parseDecoding(v.decoding);
}

/**
 * A flag's value as a number (an integer unless `integer` is false) of at least `min`, or an error
 * naming the flag and what it got.
 */
export function num(name: string, value: unknown, integer = true, min = -Infinity): number {
  const n = Number(value);
  if (
    typeof value !== "string" ||
    value.trim() === "" ||
    !Number.isFinite(n) ||
    (integer && !Number.isInteger(n)) ||
    n < min
  ) {
    const kind = integer ? "an integer" : "a number";
    const bound = min === -Infinity ? "" : ` of at least ${min}`;
    throw new Error(`--${name} must be ${kind}${bound}, got '${String(value)}'`);
  }
  return n;
}

/** A comma-separated flag's items, trimmed, empty ones dropped (`a, b,` is `["a", "b"]`). */
export function commaList(value: unknown): string[] {
  return String(value ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
}

/**
 * A CLI's last resort: a bad flag or file prints `cli: message`; a failure inside tfjs's wasm (its
 * heap, say) keeps its stack. Exits 2.
 */
export function exitOnError(cli: string): (e: Error) => never {
  return (e) => {
    console.error(e instanceof WebAssembly.RuntimeError ? e.stack : `${cli}: ${e.message}`);
    process.exit(2);
  };
}

/** `--decoding`'s value, or an error naming the choices. */
export function parseDecoding(value: unknown): Decoding {
  if (!isDecoding(value))
    throw new Error(`--decoding must be one of ${DECODINGS.join(", ")}, got '${value}'`);
  return value;
}
