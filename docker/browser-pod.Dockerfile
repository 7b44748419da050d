# syntax=docker/dockerfile:1.7
# One headless browser pod: Debian's chromium-headless-shell behind the pod API and the egress
# gateway; browserKind cloak pods run browser-pod-cloak.Dockerfile (this plus full Chromium).
# The operator creates these pods; see operator/kube/pod-spec.ts for how they run.
#   docker build -f docker/browser-pod.Dockerfile -t nightjar-browser-pod:0.2.0 .
# Base image pinned by full version tag; see api-server.Dockerfile for why not a digest.
# Debian's Chromium is not version-pinned: bookworm-security replaces old builds, so an
# exact pin would stop building after the next browser security fix. Rebuild regularly.
ARG NODE_IMAGE=node:24.9.0-bookworm-slim
# The run stage is Debian slim with Node's binary alone: npm, yarn and corepack (npm alone
# is 12 MB) stay in the deps stage, where npm runs; nothing in the image runs them.
ARG RUNTIME_IMAGE=debian:12.12-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json docker/prune-deps.mjs docker/browser-pod.deps ./
# production dependencies from the lock file, then only what this image's sources import and
# what those need (docker/prune-deps.mjs), without type declarations, maps and documents;
# and without Playwright's web UIs (trace viewer, recorder, report, dashboard: 4 MB), which
# only its own tools serve, never a browser it drives
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && rm -r node_modules/playwright-core/lib/vite \
 && node prune-deps.mjs browser-pod.deps

# Session videos (browser-pod/video.ts): ffmpeg built from Debian's own source with only what
# the pod uses: the MJPEG decoder and parser, image2pipe, scale/pad/format, VP9 (libvpx) and
# H.264 (libx264), the webm and mp4 muxers, pipe and file: one 6 MB binary that links only
# libc, with Debian's libvpx and libx264 linked in statically (their .so files are 5 MB
# more). Debian's ffmpeg package brings 259 MB of codecs, filters, ICU and libxml2.
# Not version-pinned, like Chromium: bookworm-security replaces its source with each fix.
FROM ${RUNTIME_IMAGE} AS ffmpeg
RUN printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' 'Components: main' \
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
      'Types: deb-src' 'URIs: http://deb.debian.org/debian-security' 'Suites: bookworm-security' \
      'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
      > /etc/apt/sources.list.d/nightjar-source.sources \
 && apt-get update \
 && apt-get install -y --no-install-recommends build-essential dpkg-dev nasm pkg-config libvpx-dev libx264-dev \
 && mkdir -p /build/static && lib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH) \
 && ln -s $lib/libvpx.a $lib/libx264.a /build/static/ \
 && cd /build && apt-get source ffmpeg && cd ffmpeg-*/ \
 && ./configure --prefix=/usr/local --disable-everything --disable-autodetect --disable-doc \
      --disable-ffplay --disable-ffprobe --disable-network --disable-debug --disable-avdevice \
      --enable-gpl --enable-libvpx --enable-libx264 --enable-decoder=mjpeg --enable-parser=mjpeg \
      --enable-encoder=libvpx_vp9,libx264 --enable-demuxer=image2pipe,mjpeg,image_jpeg_pipe \
      --enable-muxer=webm,mp4 --enable-filter=scale,pad,format,null,fps,setpts --enable-protocol=pipe,file \
      --pkg-config-flags=--static --extra-ldflags=-L/build/static \
 && make -j"$(nproc)" ffmpeg && install -s -m 0755 ffmpeg /usr/local/bin/ffmpeg \
 && ! ldd /usr/local/bin/ffmpeg | grep -E 'libvpx|libx264' && ffmpeg -hide_banner -encoders | grep -q libvpx-vp9

FROM ${RUNTIME_IMAGE}
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
COPY --from=ffmpeg /usr/local/bin/ffmpeg /usr/local/bin/ffmpeg
# What a page never needs, left out of every package (dpkg path-exclude); both images.
# Vulkan's validation layer: a debugging aid Chromium loads only when asked (23 MB).
# Fonts whose text falls back to a kept font, never to boxes: Noto Serif CJK and Noto
# Sans CJK Bold (72 MB; Noto Sans CJK Regular renders it, bold synthesized), the serif
# cut of each script Noto Sans also covers, Noto's Display cuts of Latin, Greek and
# Cyrillic (Noto Sans and Serif render them), and two scripts no page uses as text,
# SignWriting and Tangut (8 MB).
RUN printf '%s\n' \
      'path-exclude /usr/lib/chromium/libVkLayer_khronos_validation.so*' \
      'path-exclude /usr/share/fonts/opentype/noto/NotoSerifCJK*' \
      'path-exclude /usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSansDisplay-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifDisplay-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSansSignWriting-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifTangut-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifArmenian-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifBalinese-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifBengali-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifDevanagari-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifEthiopic-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifGeorgian-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifGrantha-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifGujarati-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifGurmukhi-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifHebrew-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifKannada-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifKhmer-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifKhojki-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifLao-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifMalayalam-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifMyanmar-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifSinhala-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifTamil-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifTelugu-*' \
      'path-exclude /usr/share/fonts/truetype/noto/NotoSerifThai-*' \
      > /etc/dpkg/dpkg.cfg.d/nightjar-browser
# What only Mesa's GPU drivers, or an X server, load (205 MB; chromium-common pulls them in
# through x11-utils): the drivers, the LLVM and Z3 they link, the ICU and libxml2 LLVM
# links, and the X keyboard maps. The headless shell draws with its own SwiftShader, WebGL
# included, and takes keys from CDP. A file of its own: the cloak image removes it and
# reinstalls them for Xvfb.
RUN printf '%s\n' \
      'path-exclude /usr/lib/*/dri/*' \
      'path-exclude /usr/lib/*/libLLVM*' \
      'path-exclude /usr/lib/*/libz3.so*' \
      'path-exclude /usr/lib/*/libicu*' \
      'path-exclude /usr/lib/*/libxml2.so*' \
      'path-exclude /usr/share/X11/xkb/*' \
      > /etc/dpkg/dpkg.cfg.d/nightjar-headless
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium-headless-shell \
      fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 nightjar \
 && useradd --uid 10001 --gid 10001 --home-dir /home/nightjar --create-home --shell /usr/sbin/nologin nightjar
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# what browser-pod/main.ts imports: the pod, the contracts it serves (pod API, errors,
# hosts), the CRD enums and tunnel/ (the WebSocket relay its CDP proxy shares with the
# api-server); nothing of the api-server or the operator
# (test/docker/dockerfiles.test.ts checks this list against the imports)
COPY browser-pod ./browser-pod
COPY contracts ./contracts
COPY crds ./crds
COPY tunnel ./tunnel
COPY telemetry ./telemetry
# the binary itself: /usr/bin/chromium-headless-shell is a shell wrapper
ENV NODE_ENV=production \
    NIGHTJAR_CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell \
    HOME=/home/nightjar \
    TMPDIR=/tmp
USER 10001:10001
EXPOSE 8090
# The pod process is PID 1, with no init before it: an init's environment would hold the pod
# token where Chromium's uid can read it, while this process makes itself non-dumpable
# (browser-pod/sandbox.ts). Chromium's zygote reaps its renderers (it is PID 1 of their PID
# namespace); an orphan appears only when Chromium's browser process dies, and the pod then
# exits. Node 24 strips the TypeScript types itself: no transpiler in the image.
ENTRYPOINT ["node"]
CMD ["browser-pod/main.ts"]
