// Layout Lab site fixes, shipped by chapters/_ext/layoutlab_site.py.
//
// The sidebar toggles: pydata-sphinx-theme 0.17 puts its own ☰ buttons into the top header, and both it and
// sphinx-book-theme 1.3 bind their click handlers with querySelector(".primary-toggle") /
// (".secondary-toggle"), i.e. to the FIRST such button only: the header's, which this site hides. The ☰ a
// reader sees (in the article header) got no handler and did nothing, on a phone and on a desktop
// (pydata-sphinx-theme issue 2451). Here every other toggle forwards its click to the bound one, so the
// themes' own code runs: on a narrow screen it opens the sidebar as a dialog (closed by Escape, a tap on the
// backdrop or the dialog's close button), on a wide one it hides or shows the sidebar.
document.addEventListener("DOMContentLoaded", () => {
  for (const side of ["primary", "secondary"]) {
    const [bound, ...others] = document.querySelectorAll(`.${side}-toggle`);
    const dialog = document.getElementById(`pst-${side}-sidebar-modal`);
    if (!bound) continue;
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopImmediatePropagation();
        bound.click();
        // on a wide screen sphinx-book-theme toggles this class instead of opening the dialog
        const sidebar = document.getElementById(`pst-${side}-sidebar`);
        button.setAttribute("aria-expanded",
          String(dialog && dialog.open ? true : !(sidebar && sidebar.classList.contains("pst-sidebar-hidden"))));
      }, true);
    }
    // A visible way to close the dialog on a phone besides the backdrop: the theme moves the sidebar's nodes
    // into the dialog when it opens, this button with them (CSS shows it only there).
    const sidebar = document.getElementById(`pst-${side}-sidebar`);
    if (dialog && sidebar) {
      const close = document.createElement("button");
      close.className = "layoutlab-close btn btn-sm";
      close.type = "button";
      close.setAttribute("aria-label", "Close the navigation");
      close.textContent = "✕ close";
      close.addEventListener("click", () => dialog.close());
      sidebar.prepend(close);
    }
  }
});
