/**
 * Output cut at a bound for the model to read: head and tail around a marker, never splitting a surrogate
 * pair (`Shell.keepHeadAndTail`, `ToolExecutor.truncate`).
 */

/** `\n[… N characters cut …]\n` (`Shell.truncationMarker`). */
export const truncationMarker = (cut: number): string => `\n[… ${cut} characters cut …]\n`

/** `Shell.keepHeadAndTail`: a text bounded to `max` characters, its head and tail around the marker. */
export const keepHeadAndTail = (head: string, tail: string, total: number, max: number): string => {
  if (total <= max) return head
  // the marker for `total` is at least as long as the one for any smaller count
  const room = max - truncationMarker(total).length
  if (room < 0) return head.slice(0, isHighSurrogate(head.charCodeAt(max - 1)) ? max - 1 : max)
  let kept = Math.floor(room / 2)
  let last = room - kept
  if (kept > 0 && isHighSurrogate(head.charCodeAt(kept - 1))) kept--
  if (last > 0 && isLowSurrogate(tail.charCodeAt(tail.length - last))) last--
  return head.slice(0, kept) + truncationMarker(total - kept - last) + tail.slice(tail.length - last)
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff
