/**
 * Perplexity's `[n]` markers: where its text cites its sources (`citations` / `search_results`, 1-based).
 * Found while the text streams, one delta at a time, without keeping the text: a marker split between two
 * deltas (`[1` + `2]`) is found too, from the few characters kept of the end of the last one.
 *
 * @internal
 */
import type { Part } from "@effect-responses/core"

/** One marker: the 1-based source number and the UTF-16 offsets of `[` and just after `]`. */
interface Marker {
  readonly source: number
  readonly start: number
  readonly end: number
}

/** The longest marker read: `[` and four digits (Perplexity cites tens of sources, not thousands). */
const MAX_DIGITS = 4
const MARKER = /\[(\d{1,4})\]/g

/** @internal */
export class CitationMarkers {
  private readonly markers: Array<Marker> = []
  /** The length of the text pushed so far. */
  private length = 0
  /** The end of the text pushed so far when it may be the start of a marker (`[`, `[1`): at most 5 characters. */
  private tail = ""

  /** Reads the next piece of the text. */
  push(text: string): void {
    if (this.tail === "" && text.indexOf("[") === -1) {
      this.length += text.length
      return
    }
    const scanned = this.tail + text
    const offset = this.length - this.tail.length
    MARKER.lastIndex = 0
    let match: RegExpExecArray | null
    while ((match = MARKER.exec(scanned)) !== null) {
      this.markers.push({ source: Number(match[1]), start: offset + match.index, end: offset + match.index + match[0].length })
    }
    this.length += text.length
    const open = scanned.lastIndexOf("[")
    this.tail = open !== -1 && open >= scanned.length - 1 - MAX_DIGITS && /^\[\d*$/.test(scanned.slice(open))
      ? scanned.slice(open)
      : ""
  }

  /**
   * The annotations of `sources` (each made by `citationOf`): one at each marker citing a source (its `startIndex` and
   * `endIndex` the marker's), in the order of the text, then one without indices for each source no marker
   * cites, in the order of the list. A marker whose number names no source is left alone.
   */
  annotations(
    sources: ReadonlyArray<unknown>,
    citationOf: (source: unknown) => Part.Annotation | undefined
  ): Array<Part.Annotation> {
    const out: Array<Part.Annotation> = []
    const cited = new Set<number>()
    for (const marker of this.markers) {
      const citation = marker.source >= 1 ? citationOf(sources[marker.source - 1]) : undefined
      if (citation?.type !== "url_citation") continue
      out.push({ ...citation, startIndex: marker.start, endIndex: marker.end })
      cited.add(marker.source)
    }
    for (let index = 0; index < sources.length; index++) {
      if (cited.has(index + 1)) continue
      const citation = citationOf(sources[index])
      if (citation !== undefined) out.push(citation)
    }
    return out
  }
}

/**
 * The annotations of `sources` on a whole `text` (see `CitationMarkers.annotations`).
 *
 * @internal
 */
export const placeCitations = (
  text: string,
  sources: ReadonlyArray<unknown>,
  citationOf: (source: unknown) => Part.Annotation | undefined
): Array<Part.Annotation> => {
  const markers = new CitationMarkers()
  markers.push(text)
  return markers.annotations(sources, citationOf)
}
