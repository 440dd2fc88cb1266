// Save what the page has (the server's text, or a picture drawn here) as a file the browser downloads.

/**
 * Download `body` (text, or a Blob) as a file named `name`; `type`: the text's media type.
 * The object URL is revoked a while after the click has handed it to the browser.
 */
export function download(body, type, name) {
  const url = URL.createObjectURL(body instanceof Blob ? body : new Blob([body], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
