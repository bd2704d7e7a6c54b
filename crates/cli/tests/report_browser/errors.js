// Loaded first: keeps every error the page raises (script errors, failed
// loads, console.error) for layout.js to report.
window.__reportErrors = [];
window.addEventListener(
  "error",
  (e) => window.__reportErrors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || "error")),
  true,
);
const consoleError = console.error;
console.error = (...args) => {
  window.__reportErrors.push(args.join(" "));
  consoleError(...args);
};
