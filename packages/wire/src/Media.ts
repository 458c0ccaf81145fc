/**
 * The request-side encoding of media parts that both protocols share: base64 data as a `data:` URL, and
 * the file name a file part is sent with when it has none. What wraps them (`input_image` / `input_file`
 * for Responses, `image_url` / `file` for Chat Completions) stays with each protocol.
 *
 * @since 0.1.0
 */

/**
 * The `data:` URL of base64 `data` of media type `mediaType` (`data:<mediaType>;base64,<data>`), the form
 * OpenAI takes in `image_url` and `file_data`. `data` is used as given: it must already be base64.
 *
 * @since 0.1.0
 * @category encoding
 */
export const dataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`

/**
 * The file name of a file part sent without one: `file.<subtype>` from the media type's subtype without
 * parameters or suffix (`application/pdf` -> `file.pdf`, `application/ld+json` -> `file.ld`), or `file`
 * when the media type has no subtype.
 *
 * @since 0.1.0
 * @category encoding
 */
export const defaultFilename = (mediaType: string): string => {
  const subtype = mediaType.split("/")[1]?.split(/[;+]/)[0] ?? ""
  return subtype === "" ? "file" : `file.${subtype}`
}
