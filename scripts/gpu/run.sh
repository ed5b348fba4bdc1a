#!/bin/bash
# Runs one of the bundled CLIs (pretrain, eval, train) on this machine's GPU through Dawn and
# Vulkan; made by scripts/gpu/pack.sh, run from the repository root:
#   bash .gpu/run.sh pretrain --backend webgpu --out DIR [pretrain's flags]
# Needs xz or python3 there. Unpacks Node and the bundles into a temporary folder, brings the
# Vulkan loader (into that folder, on LD_LIBRARY_PATH: nothing of the system's is replaced) if the
# system has none, points Vulkan at the NVIDIA driver's ICD (or $ICD), prints the adapter, then
# runs the CLI.
set -uo pipefail
cli=${1:?usage: run.sh pretrain|eval|train [flags]}; shift
G=$(cd "$(dirname "$0")" && pwd)
U=$(mktemp -d /tmp/gpu-run.XXXXXX) && mkdir -p $U/node_modules/webgpu/dist/linux-x64
unxz() { xz -dc "$1" 2>/dev/null || python3 -c "import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)" "$1"; }
unxz $G/node.xz >$U/node && chmod +x $U/node
unxz $G/$cli.mjs.xz >$U/$cli.mjs
cp $G/*.wasm $U/ && cp $G/node_modules/webgpu/{index.js,package.json} $U/node_modules/webgpu/
unxz $G/node_modules/webgpu/dist/linux-x64/dawn.node.xz >$U/node_modules/webgpu/dist/linux-x64/dawn.node
if ! ldconfig -p | grep libvulkan.so.1 >/dev/null; then
  for f in $G/debs/*.deb; do dpkg -x "$f" $U/sysroot; done
  export LD_LIBRARY_PATH=$U/sysroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ICD=${ICD:-$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1)}
if [ -n "$ICD" ]; then export VK_DRIVER_FILES=$ICD VK_ICD_FILENAMES=$ICD; fi
echo "node $($U/node --version), Vulkan ICD: ${ICD:-none found}"
cat >$U/probe.mjs <<'PROBE'
import { create } from "webgpu";
const a = await create([]).requestAdapter({ powerPreference: "high-performance" });
if (!a) { console.log("WebGPU: no adapter"); process.exit(3); }
console.log(`WebGPU adapter: ${a.info.vendor} ${a.info.architecture} ${a.info.device} (${a.info.description})`);
process.exit(0);
PROBE
timeout 60 $U/node $U/probe.mjs || echo "run.sh: WebGPU is not usable here (--backend webgpu will fail)"
$U/node $U/$cli.mjs "$@"
