// Loaded last: measures the page as the browser laid it out and writes the
// findings as JSON into <pre id="layout-check">, read back from --dump-dom.
(function () {
  const out = {
    errors: window.__reportErrors || [],
    resources: performance.getEntriesByType("resource").map((r) => r.name),
    external: [...document.querySelectorAll("[src], link[href], [href^='http']")].length,
    height: Math.ceil(document.documentElement.scrollHeight),
    charts: [],
    tables_overflowing: [...document.querySelectorAll(".table")]
      .filter((d) => d.scrollWidth > d.clientWidth + 1)
      .map((d) => d.parentElement.parentElement.id),
  };
  const inside = (r, box) =>
    r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
  const meet = (a, b) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  for (const fig of document.querySelectorAll("figure.chart")) {
    const svg = fig.querySelector("svg");
    const box = svg.getBoundingClientRect();
    // Bars are the filled rectangles other than white ones (background,
    // label grounds): legend swatches are discs.
    const bars = [...svg.querySelectorAll("rect")].filter((r) => {
      const fill = (r.getAttribute("fill") || "").toUpperCase();
      return fill !== "#FFFFFF" && fill !== "NONE" && fill !== "";
    });
    const texts = [...svg.querySelectorAll("text")]
      .filter((t) => t.textContent.trim() !== "")
      .map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }));
    const overlaps = [];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        if (meet(texts[i].r, texts[j].r)) overlaps.push([texts[i].text, texts[j].text]);
      }
    }
    out.charts.push({
      id: fig.dataset.chart,
      width: box.width,
      height: box.height,
      bars: bars.length,
      bar_colors: [...new Set(bars.map((r) => r.getAttribute("fill").toUpperCase()))].length,
      texts: texts.map((t) => t.text),
      outside: texts.filter((t) => !inside(t.r, box)).map((t) => t.text),
      overlaps,
    });
  }
  const pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
