// The console works without script; this only adds conveniences.
// A copy button copies its field; where the clipboard is not allowed the
// field's text is selected for the user to copy.
for (const b of document.querySelectorAll("button[data-copy]")) {
  const field = document.getElementById(b.dataset.copy);
  if (!field) continue;
  b.hidden = false;
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      b.textContent = "Copied";
    } catch {
      field.select();
      b.textContent = "Press Ctrl+C";
    }
  });
}
