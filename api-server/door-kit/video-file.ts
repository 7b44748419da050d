// A stored video answered over HTTP with single byte ranges (RFC 9110 §14), so a player can
// seek: the REST route (http/video.ts) and the console's player (console/videos.ts) answer
// the same bytes the same way. Design: docs/sessions.md#video
import type { FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../contracts/errors.ts'
import type { VideoFormat } from '../../contracts/pod-api.ts'
import { VIDEO_TYPES } from '../recordings/video.ts'

/** The one range of a Range header over `size` bytes: [start, end] inclusive; null for the whole file; 'unsatisfiable'. */
export function byteRange(header: string | undefined, size: number): [number, number] | null | 'unsatisfiable' {
  const m = header?.trim().match(/^bytes=(\d*)-(\d*)$/)
  // no header, another unit or several ranges: the whole file (a server may ignore a Range it does not serve)
  if (!m || (!m[1] && !m[2])) return null
  if (!m[1]) {
    const suffix = Number(m[2])
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return [Math.max(0, size - suffix), size - 1]
  }
  const start = Number(m[1])
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1
  if (start >= size) return 'unsatisfiable'
  if (end < start) return null
  return [start, end]
}

/** the whole file (200), the one range asked for (206), or 416 with the size when the range lies past the end */
export function sendVideoFile(req: FastifyRequest, reply: FastifyReply, format: VideoFormat, file: Buffer): FastifyReply {
  reply.header('accept-ranges', 'bytes').header('content-type', VIDEO_TYPES[format]).header('cache-control', 'private, no-store')
  const range = byteRange(req.headers.range, file.length)
  if (range === 'unsatisfiable') throw errors.rangeNotSatisfiable(file.length).withHeaders({ 'content-range': `bytes */${file.length}`, 'accept-ranges': 'bytes' })
  if (!range) return reply.code(200).send(file)
  const [start, end] = range
  return reply.code(206).header('content-range', `bytes ${start}-${end}/${file.length}`).send(file.subarray(start, end + 1))
}
