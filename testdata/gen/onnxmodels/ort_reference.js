// Writes testdata/onnx/ort_reference.json: the outputs of onnxruntime-node 1.30.0
// (graph optimizations disabled) on the test models, for inputs made by the
// same formula as importer/onnx/models_test.go. A throwaway tool, not a
// dependency: npm install onnxruntime-node --ignore-scripts, then
// node ort_reference.js testdata/onnx testdata/onnx/ort_reference.json
const ort = require('onnxruntime-node');
const fs = require('fs');
const dir = process.argv[2], outFile = process.argv[3];
const models = {
  cnn: {image: ['float32', [1,3,16,16]]},
  resnet: {input: ['float32', [1,4,8,8]]},
  mlp: {features: ['float32', [1,64]]},
  matmul: {a: ['float32', [3,4,8]], b: ['float32', [3,8,5]]},
  qdq_conv: {x: ['float32', [1,3,8,8]]},
  qlinear: {x: ['uint8', [1,2,6,6]]},
  shape_arith: {x: ['float32', [1,8,4,4]]},
  tf_nhwc: {input_1: ['float32', [1,6,6,3]]},
};
function gen(dt, shape, salt) {
  const n = shape.reduce((a,b)=>a*b, 1);
  if (dt === 'uint8') { const a = new Uint8Array(n); for (let i=0;i<n;i++) a[i] = (i*71+13+salt)%256; return a; }
  const a = new Float32Array(n); for (let i=0;i<n;i++) a[i] = (((i*37+salt)%101)-50)/50; return a;
}
(async () => {
  const res = {};
  for (const [name, ins] of Object.entries(models)) {
    const s = await ort.InferenceSession.create(`${dir}/${name}.onnx`, {graphOptimizationLevel: 'disabled'});
    const feeds = {}; let salt = 0;
    for (const [k, [dt, shape]] of Object.entries(ins)) { feeds[k] = new ort.Tensor(dt, gen(dt, shape, salt), shape); salt += 7; }
    const out = await s.run(feeds);
    const o = out[s.outputNames[0]];
    res[name] = {output: s.outputNames[0], shape: o.dims, data: Array.from(o.data)};
  }
  fs.writeFileSync(outFile, JSON.stringify(res));
})().catch(e => { console.error(e); process.exit(1); });
