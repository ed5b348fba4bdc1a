import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BOS, EOA, Tokenizer } from "./tokenizer";

const corpus = [
  'pay.send_money(access_token="pa3k9x2", receiver_email="rosa.ellis@post.net", amount=25, note="lunch")',
  '[{"contact_id":3,"first_name":"Rosa","last_name":"Ellis","email":"rosa.ellis@post.net"}]',
  "You act for Rosa Ellis (email rosa.ellis@post.net, phone 555-0963). Today is 2026-07-25.",
  'api_docs.show_api_doc(app_name="pay", api_name="send_money")',
];
const tok = Tokenizer.build([...corpus, ...corpus], { minCount: 2 });

describe("Tokenizer", () => {
  it("round-trips any string exactly, unseen text, emoji and lone surrogates included", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })),
        (s) => {
          expect(tok.decode(tok.encode(s))).toBe(s);
        },
      ),
      { numRuns: 3000 },
    );
    for (const s of ["", "\uD800", "Ünïcödé ✓ 😀", "Zzyzx_Qwerty ROSA rOSA", "a\u0000b", ...corpus])
      expect(tok.decode(tok.encode(s))).toBe(s);
  });

  it("makes names, emails and numbers copyable: shared word tokens, one token per digit", () => {
    const name = tok.encode("Rosa");
    const email = tok.encode("rosa.ellis@post.net");
    expect(name.length).toBe(2); // <cap> rosa
    expect(email).toContain(name[1]);
    expect(tok.encode("555-0963").length).toBe(8);
    expect(tok.encode("show_api_doc").length).toBe(1);
  });

  it("ends a quoted value with the same token in an observation and in an action", () => {
    const value = tok.encode("rosa.ellis@post.net");
    const closing = (text: string) => {
      const ids = tok.encode(text);
      const at = ids.findIndex((_, i) => value.every((v, k) => ids[i + k] === v));
      return ids[at + value.length];
    };
    const quote = tok.encode('"')[0];
    expect(closing('[{"email":"rosa.ellis@post.net"},{"email":"x"}]')).toBe(quote);
    expect(closing('pay.login(username="rosa.ellis@post.net")')).toBe(quote);
    expect(closing('pay.login(username="rosa.ellis@post.net", password="x")')).toBe(quote);
    // A vocabulary saved before the rule existed keeps its old encoding (its checkpoints' text).
    const saved = Tokenizer.build([...corpus, ...corpus], { splitQuote: false }).toJSON();
    expect(saved.splitQuote).toBeUndefined();
    const old = Tokenizer.fromJSON(JSON.parse(JSON.stringify(saved)));
    expect(old.encode('","')).toHaveLength(1);
    expect(old.withSplitQuote().encode('","')).toEqual([quote, ...old.encode(',"')]);
    // A key's closing quote stays in its piece: `":"` marks where a value starts.
    expect(tok.encode('":"')).toHaveLength(1);
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), splitQuote: "yes" })).toThrow(/splitQuote/);
  });

  it("writes a relationship's plural as its singular + s, so an action can copy the singular", () => {
    const text = [
      "Request $40 from each of my classmates on pay. Classmates and cousins.",
      'phone.search_contacts(access_token="x", relationship="classmate")',
      '[{"relationship":"cousin"},{"relationship":"friend"}]',
    ];
    const plurals = ["classmates", "cousins", "friends", "managers"];
    const built = Tokenizer.build([...text, ...text, ...corpus, ...corpus], { minCount: 2 });
    const t = Tokenizer.build([...text, ...text, ...corpus, ...corpus], { minCount: 2, plurals });
    // Only plurals whose singular is a word of the vocabulary ("manager" is not).
    expect(t.toJSON().plurals).toEqual(["classmates", "cousins", "friends"]);
    const [classmate] = t.encode("classmate");
    const [s] = t.encode("s");
    expect(t.encode("my classmates")).toEqual([...t.encode("my "), classmate, s]);
    expect(t.encode("Classmates")).toEqual([...t.encode("Classmate"), s]);
    expect(t.encode("managers")).toEqual(built.encode("managers"));
    for (const x of [...text, "classmatess Cousins FRIENDS friendsclassmates", "my friends'"])
      expect(t.decode(t.encode(x))).toBe(x);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("classmates", " ", "Cousins", "s", "'", "x", "é")),
        (xs) => {
          const x = xs.join("");
          expect(t.decode(t.encode(x))).toBe(x);
        },
      ),
    );
    // Saved, loaded and added to an older vocabulary alike; a vocabulary without it is unchanged.
    expect(
      Tokenizer.fromJSON(JSON.parse(JSON.stringify(t.toJSON()))).encode(text[0] as string),
    ).toEqual(t.encode(text[0] as string));
    expect(built.toJSON().plurals).toBeUndefined();
    expect(built.withPlurals(plurals).encode(text[0] as string)).toEqual(
      t.encode(text[0] as string),
    );
    expect(() => Tokenizer.fromJSON({ ...t.toJSON(), plurals: ["Cousins"] })).toThrow(/plurals/);
    expect(() => Tokenizer.fromJSON({ ...t.toJSON(), plurals: "cousins" })).toThrow(/plurals/);
    expect(() => Tokenizer.fromJSON({ ...t.toJSON(), plurals: ["managers"] })).toThrow(/managers/);
  });

  it("maps the pieces that close a single-quoted value to the action's closing quote (copyEmit)", () => {
    const text = [
      "Add 'Otto' as a new line to my note 'Baby names'.",
      "Add a todo 'Coffee filters' due 2026-06-17, then 'Tea' and 'Milk'.",
      "Rosa's list: 'a', 'b'; it's fine",
    ];
    const t = Tokenizer.build([...text, ...text, ...corpus, ...corpus], { minCount: 2 });
    const quote = t.encode('"')[0] as number;
    const mapped = new Map(t.quoteEmit());
    const pieces = [...mapped.keys()].map((id) => t.tokenText(id));
    expect(pieces).toEqual(expect.arrayContaining(["' ", "'."]));
    expect(pieces.every((p) => p[0] === "'" && p.length > 1)).toBe(true);
    expect([...mapped.values()].every((id) => id === quote)).toBe(true);
    // The opening ` '` is not mapped, and neither is an apostrophe inside a word (a lone `'`).
    expect(t.encode(" 'Otto").some((id) => mapped.has(id))).toBe(false);
    expect(t.encode("Rosa's").some((id) => mapped.has(id))).toBe(false);
    // Every closing quote of the texts starts a mapped token: 7 of them.
    const closings = text.join("\n").match(/'(?![A-Za-z0-9])/g)?.length;
    expect(closings).toBe(7);
    expect(text.flatMap((s) => t.encode(s)).filter((id) => mapped.has(id))).toHaveLength(7);
  });

  it("is compact on world text", () => {
    const text = corpus.join("\n");
    expect(tok.encode(text).length).toBeLessThan(text.length / 2.5);
  });

  it("saves and restores its vocabulary, and refuses a bad one", () => {
    const again = Tokenizer.fromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    expect(again.size).toBe(tok.size);
    expect(again.encode(corpus[0] as string)).toEqual(tok.encode(corpus[0] as string));
    expect(() => Tokenizer.fromJSON({ kind: "other" })).toThrow(/not a loop-world-tokenizer/);
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), words: ["ok", "ok"] })).toThrow(
      /duplicates/,
    );
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), words: ["Bad"] })).toThrow(/lower-case/);
  });

  it("special tokens decode to nothing", () => {
    expect(tok.decode([BOS, ...tok.encode("hi"), EOA])).toBe("hi");
  });
});
