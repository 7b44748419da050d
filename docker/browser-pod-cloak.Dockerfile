# syntax=docker/dockerfile:1.7
# The browser pod for browserKind cloak: headful Chromium on Xvfb (browser-pod/cloak.ts).
# Two images because only cloak needs the full browser and an X server: the headless image
# the pooled sessions run is about 540 MB smaller. This one is built on it (Node, node_modules,
# fonts and sources are its layers, shared on a node) and adds Debian's chromium and xvfb.
#   docker build -f docker/browser-pod-cloak.Dockerfile -t nightjar-browser-pod-cloak:0.2.0 .
ARG BROWSER_POD_IMAGE=nightjar-browser-pod:0.2.0

FROM ${BROWSER_POD_IMAGE}
USER root
# Xvfb's GLX wants Mesa's drivers and its keyboard the X keyboard maps, which the headless
# image leaves out (its nightjar-headless dpkg exclusions): drop those and reinstall what
# they emptied.
# First: what chromium and xvfb bring runs those (shared-mime-info's setup needs libxml2).
RUN rm /etc/dpkg/dpkg.cfg.d/nightjar-headless \
 && apt-get update \
 && apt-get install -y --no-install-recommends --reinstall \
      $(dpkg-query -W -f '${db:Status-Status} ${binary:Package}\n' libgl1-mesa-dri 'libllvm*' 'libz3-*' 'libicu*' libxml2 xkb-data | sed -n 's/^installed //p') \
 && apt-get install -y --no-install-recommends chromium xvfb \
 && rm -rf /var/lib/apt/lists/*
ENV NIGHTJAR_CHROMIUM_PATH=/usr/bin/chromium
USER 10001:10001
