// The bar's buttons that move files: the recording (.cast), Upload into the session's working
// directory and Download from it (routes/files.ts, docs/files.md). Every request carries the
// bearer header, so each answer is fetched and saved from a blob, never a plain link.
import type { SessionsApi } from '../client/sessions-api.ts';

export interface FileButtons {
  recording: HTMLElement;
  upload: HTMLElement;
  uploadInput: HTMLInputElement;
  download: HTMLElement;
  api(): SessionsApi;
  /** The attached session, if any. */
  session(): string | null;
  /** A transfer went through: said for a while (an earlier failure no longer holds). */
  onDone(message: string): void;
  onError(message: string): void;
}

export function wireFileButtons(ui: FileButtons): void {
  const failed = (e: unknown) => ui.onError(e instanceof Error ? e.message : String(e));
  ui.recording.addEventListener('click', () => {
    const id = ui.session();
    if (!id) return;
    ui.api()
      .recording(id)
      .then(async (res) => saveBlob(await res.blob(), `pty-ws-${id}.cast`), failed);
  });
  ui.upload.addEventListener('click', () => ui.uploadInput.click());
  ui.uploadInput.addEventListener('change', () => {
    const file = ui.uploadInput.files?.[0];
    ui.uploadInput.value = '';
    const id = ui.session();
    if (!id || !file) return;
    file
      .arrayBuffer()
      .then((buf) => ui.api().uploadFile(id, file.name, new Uint8Array(buf)))
      .then((r) => ui.onDone(`Uploaded ${r.name} (${r.bytes} bytes) to ${r.directory}.`), failed);
  });
  ui.download.addEventListener('click', () => {
    const id = ui.session();
    const name = id ? window.prompt("File to download from the session's working directory:")?.trim() : undefined;
    if (!id || !name) return;
    ui.api()
      .downloadFile(id, name)
      .then(async (res) => saveBlob(await res.blob(), name), failed);
  });
}

function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
