/**
 * Output cut at a bound for the model to read: head and tail around a marker, never splitting a surrogate
 * pair (`Shell.keepHeadAndTail`, `ToolExecutor.truncate`). A cut is always marked within the bound: with
 * the full marker when there is room for it, else a shorter one after the head (see `keepHeadAndTail`).
 */

/** `\n[… N characters cut …]\n` (`Shell.truncationMarker`). */
export const truncationMarker = (cut: number): string => `\n[… ${cut} characters cut …]\n`

/** `[…N cut]`, the marker after the head when the bound has no room for `truncationMarker`. */
export const shortTruncationMarker = (cut: number): string => `[…${cut} cut]`

/** The least marker, after the head when the bound has no room for `shortTruncationMarker` either. */
export const ELLIPSIS = "…"

/**
 * `Shell.keepHeadAndTail`: a text bounded to `max` characters, its head and tail around the marker; with no
 * room for it, the head then `shortTruncationMarker`, or the head then `ELLIPSIS`; a bound of 0 keeps
 * nothing.
 */
export const keepHeadAndTail = (head: string, tail: string, total: number, max: number): string =>
  total <= max ? head : cut(head, tail, total, max)

/**
 * `keepHeadAndTail`'s cut: at most `max` characters, at least one of them a marker (none when `max` is 0),
 * the count in the marker what of the text was left out.
 */
const cut = (head: string, tail: string, total: number, max: number): string => {
  if (!(max >= 1)) return ""
  // the marker for `total` is at least as long as the one for any smaller count
  const room = max - truncationMarker(total).length
  if (room < 0) {
    const short = max - shortTruncationMarker(total).length
    if (short >= 0) {
      const kept = headLength(head, short)
      return head.slice(0, kept) + shortTruncationMarker(total - kept)
    }
    return headThenEllipsis(head, max)
  }
  const kept = headLength(head, Math.floor(room / 2))
  let last = room - Math.floor(room / 2)
  if (last > 0 && isLowSurrogate(tail.charCodeAt(tail.length - last))) last--
  return head.slice(0, kept) + truncationMarker(total - kept - last) + tail.slice(tail.length - last)
}

/** The first characters of `head` then `ELLIPSIS`, `max` characters at most (a bound of 0 keeps nothing). */
const headThenEllipsis = (head: string, max: number): string =>
  max >= 1 ? head.slice(0, headLength(head, max - 1)) + ELLIPSIS : ""

/** `n`, or `n - 1` when the first `n` characters of `head` would end with half a surrogate pair. */
const headLength = (head: string, n: number): number => n > 0 && isHighSurrogate(head.charCodeAt(n - 1)) ? n - 1 : n

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff
