#!/usr/bin/env node
// Writes charts/nightjar/files/chromium-sandbox.json: the runtimes' default seccomp profile
// for a pod without capabilities (from Debian's containers-common, never granting more than
// containerd's and Docker's defaults), plus exactly the namespace calls Chromium's sandbox
// needs — RuntimeDefault refuses them ("No usable sandbox!"). Design: docs/security.md#the-seccomp-profile-on-kubernetes
//   node scripts/gen-seccomp-profile.mjs [--check]   (--check: fail if the file is stale)
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(root, 'charts/nightjar/files/chromium-sandbox.json')
const SOURCE = process.env.NIGHTJAR_SECCOMP_SOURCE || '/usr/share/containers/seccomp.json'

/** granted to an unprivileged container by podman's file, but only with a capability by containerd's and Docker's defaults */
const NEEDS_A_CAPABILITY = [
  // CAP_SYS_ADMIN: mounts, namespaces, host names, kernel logs
  'mount', 'umount', 'umount2', 'pivot_root', 'setns', 'unshare', 'fsopen', 'fsmount', 'fsconfig', 'fspick', 'move_mount',
  'open_tree', 'mount_setattr', 'name_to_handle_at', 'syslog', 'clone3', 'quotactl_fd',
  // CAP_SYS_PTRACE: another process's memory (the pod process is non-dumpable as well)
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd', 'kcmp', 'process_madvise',
  // CAP_SYS_NICE: memory policy of other processes
  'get_mempolicy', 'set_mempolicy', 'mbind',
]

/** what Chromium's namespace sandbox adds (clone is allowed whole: its namespace flags are the point) */
const FOR_CHROMIUM_SANDBOX = ['clone', 'unshare', 'chroot']

function profile() {
  const src = JSON.parse(readFileSync(SOURCE, 'utf8'))
  const appliesHere = (rule) => {
    const inc = rule.includes ?? {}
    const exc = rule.excludes ?? {}
    if (inc.caps?.length) return false // no capability is granted to a browser pod
    if (inc.arches?.length && !inc.arches.some((a) => ['amd64', 'x32', 'x86'].includes(a))) return false
    if (exc.arches?.some((a) => a === 'amd64')) return false
    return true // excludes.caps: applies exactly because the pod lacks the capability
  }
  const allowed = new Set()
  const conditional = []
  const pushOnce = (list, rule) => { if (!list.some((r) => JSON.stringify(r) === JSON.stringify(rule))) list.push(rule) }
  for (const rule of src.syscalls) {
    if (!appliesHere(rule) || rule.action !== 'SCMP_ACT_ALLOW') continue
    if (rule.args?.length) pushOnce(conditional, { names: [...rule.names].sort(), action: 'SCMP_ACT_ALLOW', args: rule.args.map(({ index, value, valueTwo, op }) => ({ index, value, valueTwo, op })) })
    else for (const n of rule.names) allowed.add(n)
  }
  for (const n of NEEDS_A_CAPABILITY) allowed.delete(n)
  for (const n of FOR_CHROMIUM_SANDBOX) allowed.add(n)
  // clone3 answers ENOSYS, as in the runtimes' default: the C library then falls back to clone
  const enosys = { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 }
  return {
    // what the source answers for a call it does not know (ENOSYS: a newer call's caller falls back)
    defaultAction: 'SCMP_ACT_ERRNO',
    defaultErrnoRet: src.defaultErrnoRet ?? 1,
    architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
    syscalls: [{ names: [...allowed].sort(), action: 'SCMP_ACT_ALLOW' }, ...conditional, enosys],
  }
}

const text = JSON.stringify(profile(), null, 1) + '\n'
if (process.argv.includes('--check')) {
  if (readFileSync(OUT, 'utf8') !== text) {
    process.stderr.write(`${OUT} is stale: run node scripts/gen-seccomp-profile.mjs\n`)
    process.exit(1)
  }
} else {
  writeFileSync(OUT, text)
  process.stderr.write(`wrote ${OUT}\n`)
}
