// The pod's reading of its memory cgroup: an OOM kill is told from any other renderer
// crash by the cgroup's own count, in either cgroup version's file.
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { oomKills } from '../../browser-pod/memory.ts'

const dir = mkdtempSync(join(tmpdir(), 'nightjar-memory-'))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

t.test('cgroup v2: memory.events counts OOM kills', async (t) => {
  const events = file('memory.events', 'low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n')
  t.equal(oomKills([events]), 2, 'oom_kill, not oom (the times the limit was hit)')
})

t.test('cgroup v1: memory.oom_control counts them too', async (t) => {
  const control = file('memory.oom_control', 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')
  t.equal(oomKills([join(dir, 'absent'), control]), 1, 'the first file that says is read')
})

t.test('a process outside any memory cgroup reads nothing, so a crash never counts as OOM', async (t) => {
  t.equal(oomKills([join(dir, 'absent')]), undefined)
  const old = file('old.oom_control', 'oom_kill_disable 0\nunder_oom 0\n')
  t.equal(oomKills([old]), undefined, 'a kernel older than 4.13 has no count')
})
