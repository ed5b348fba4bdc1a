#!/bin/bash
# Packs what the Node CLIs need to run on a bare Linux x86-64 machine with a GPU and no network
# (a GPU driver there, and xz or python3): .gpu/ holds Node itself, the CLIs bundled into single
# files (esbuild), Dawn's Node bindings (npm `webgpu`), tfjs's wasm binaries and the Vulkan loader
# (Debian packages), compressed (about 30 MB). Then, on that machine, from the repository root:
#   bash .gpu/run.sh pretrain --backend webgpu --out DIR ...     (or eval, train)
# See docs/model.md, "Training on a GPU from Node".
set -euo pipefail
cd "$(dirname "$0")/../.."
# Run as root on a Debian-like x86-64 machine (apt-get fetches the loader; Node is this machine's).
[ "$(uname -m)" = x86_64 ] || { echo "pack.sh: packs this machine's Node: run it on x86-64" >&2; exit 1; }
G=.gpu
rm -rf $G && mkdir -p $G/node_modules/webgpu/dist/linux-x64 $G/debs
banner="import { createRequire as __cr } from 'module'; import { fileURLToPath as __fu } from 'url'; import { dirname as __dn } from 'path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);"
for cli in pretrain eval train; do
  npx esbuild src/cli/$cli.ts --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --banner:js="$banner" --log-level=warning --outfile=$G/$cli.mjs
done
# The wasm backend looks for its binaries next to the bundle (__dirname).
cp node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm $G/
cp node_modules/webgpu/index.js node_modules/webgpu/package.json $G/node_modules/webgpu/
cp node_modules/webgpu/dist/linux-x64/dawn.node $G/node_modules/webgpu/dist/linux-x64/
cp "$(readlink -f "$(command -v node)")" $G/node
# The Vulkan loader and GL dispatch libraries, for a machine whose image has none.
apt_opts=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/gpu-pack-apt)
mkdir -p /tmp/gpu-pack-apt/partial
apt-get "${apt_opts[@]}" update >/dev/null
(cd $G/debs && apt-get "${apt_opts[@]}" download libvulkan1 libglvnd0 libgl1 libglx0 libegl1 libgles2 libopengl0 >/dev/null)
xz -T0 -6 $G/node $G/*.mjs $G/node_modules/webgpu/dist/linux-x64/dawn.node
cp scripts/gpu/run.sh $G/run.sh
du -sh $G
