// Layout check of a parbench HTML report, run inside headless Chromium by
// tests/report_layout_test.sh, which injects this file into a copy of the
// report (the report itself carries no script). The findings are written into
// the page as a pre element with id layout-check, which the test reads from
// the dumped DOM: a first line
//   layout-check: N charts, N texts, N problems, page WIDTHxHEIGHT
// then one line per problem.
(() => {
  "use strict";
  const TOLERANCE = 1; // px: boxes that merely touch or graze do not count
  const problems = [];
  let nTexts = 0;

  const quote = (s) => {
    s = s.replace(/\s+/g, " ").trim();
    return '"' + (s.length > 90 ? s.slice(0, 87) + "..." : s) + '"';
  };

  // Boxes are quadrilaterals on screen (four corners in order): a rotated
  // text (the -35 degree category labels, the -90 degree axis title) keeps
  // its true outline, so that parallel slanted labels do not count as
  // overlapping merely because their axis-aligned hulls do.
  const rectQuad = (r) => [[r.left, r.top], [r.right, r.top], [r.right, r.bottom], [r.left, r.bottom]];

  // An SVG element's own bounding box through its transforms to the screen.
  const screenQuad = (el) => {
    const b = el.getBBox(), m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(
        ([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };

  // The drawing area of an <svg>: its viewBox (or width x height) on screen.
  const svgQuad = (svg) => {
    const vb = svg.viewBox.baseVal;
    const [x, y, w, h] = vb && vb.width > 0 ? [vb.x, vb.y, vb.width, vb.height]
                                            : [0, 0, svg.width.baseVal.value, svg.height.baseVal.value];
    const m = svg.getScreenCTM();
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]].map(([px, py]) => [m.a * px + m.e, m.d * py + m.f]);
  };

  const sideLength = (q, i) => Math.hypot(q[i + 1][0] - q[i][0], q[i + 1][1] - q[i][1]);

  // The two unit directions of a quadrilateral's sides.
  const axes = (q) => [0, 1].map((i) => {
    const dx = q[i + 1][0] - q[i][0], dy = q[i + 1][1] - q[i][1], len = Math.hypot(dx, dy) || 1;
    return [dx / len, dy / len];
  });

  // How far two boxes overlap along one direction (negative: apart).
  const depth = (a, b, [ux, uy]) => {
    const project = (q) => q.map(([x, y]) => x * ux + y * uy);
    const pa = project(a), pb = project(b);
    return Math.min(Math.max(...pa), Math.max(...pb)) - Math.max(Math.min(...pa), Math.min(...pb));
  };

  // Overlap of two boxes (separating axes) as "W x H px" along the first
  // box's sides, or null when some direction separates them within the tolerance.
  const overlap = (a, b) => {
    const d = axes(a).concat(axes(b)).map((u) => depth(a, b, u));
    if (d.some((x) => x <= TOLERANCE)) return null;
    return d[0].toFixed(0) + "x" + d[1].toFixed(0) + " px";
  };

  // Whether box q lies inside the axis-aligned box area, within the tolerance.
  const inside = (q, area) => {
    const xs = area.map((p) => p[0]), ys = area.map((p) => p[1]);
    const [l, r, t, b] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    return q.every(([x, y]) => x >= l - TOLERANCE && x <= r + TOLERANCE && y >= t - TOLERANCE && y <= b + TOLERANCE);
  };

  // The chart's name in messages: its number, its bold title (else its first
  // text), the section it is in.
  const chartName = (svg, index) => {
    const title = svg.querySelector('text[font-weight="bold"]') || svg.querySelector("text");
    const heading = svg.closest("section")?.querySelector("h2");
    return "chart " + (index + 1) + " " + (title ? quote(title.textContent) : "(untitled)") +
           (heading ? " in " + quote(heading.textContent) : "");
  };

  const checkChart = (svg, name) => {
    const area = svgQuad(svg);
    const texts = [];
    for (const t of svg.querySelectorAll("text")) {
      const s = t.textContent.trim();
      if (s === "") continue;
      nTexts++;
      const box = screenQuad(t);
      // A text with no extent was drawn with no font: nothing about it could be checked.
      if (sideLength(box, 0) < 0.5 || sideLength(box, 1) < 0.5) {
        problems.push(name + ": text " + quote(s) + " has no size (no font?)");
        continue;
      }
      if (!inside(box, area)) problems.push(name + ": text " + quote(s) + " runs outside the chart");
      texts.push({text: s, box});
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        const o = overlap(texts[i].box, texts[j].box);
        if (o) problems.push(name + ": texts overlap (" + o + "): " + quote(texts[i].text) + " and " + quote(texts[j].text));
      }
    const saysEmpty = /no measured values to plot/.test(svg.textContent);
    if (!svg.querySelector(".pb-data") || saysEmpty)
      problems.push(name + ": no data plotted" + (saysEmpty ? ' ("no measured values to plot")' : " (no pb-data mark)"));
  };

  // Page text outside charts and tables (table cells are laid out by their
  // table and scroll in its box): no two runs of text may overlap, nor may
  // one run over a chart.
  const checkPage = (charts) => {
    const runs = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => n.textContent.trim() === "" || n.parentElement.closest("svg, table, script, style")
                             ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT
    });
    const range = document.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      range.selectNodeContents(n);
      for (const r of range.getClientRects())
        if (r.width > 0 && r.height > 0) runs.push({text: n.textContent, box: rectQuad(r)});
    }
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        const o = overlap(runs[i].box, runs[j].box);
        if (o) problems.push("page text overlaps (" + o + "): " + quote(runs[i].text) + " and " + quote(runs[j].text));
      }
      for (const c of charts) {
        const o = overlap(runs[i].box, c.box);
        if (o) problems.push("page text " + quote(runs[i].text) + " overlaps " + c.name + " (" + o + ")");
      }
    }
  };

  const run = () => {
    const svgs = Array.from(document.querySelectorAll("svg"));
    const charts = svgs.map((svg, i) => ({svg, name: chartName(svg, i), box: rectQuad(svg.getBoundingClientRect())}));
    for (const c of charts) {
      try {
        checkChart(c.svg, c.name);
      } catch (e) {
        problems.push(c.name + ": check failed: " + e);
      }
    }
    try {
      checkPage(charts);
    } catch (e) {
      problems.push("page text: check failed: " + e);
    }
    const root = document.documentElement;
    const out = document.createElement("pre");
    out.id = "layout-check";
    out.textContent = ["layout-check: " + svgs.length + " charts, " + nTexts + " texts, " + problems.length +
                       " problems, page " + root.scrollWidth + "x" + root.scrollHeight, ...problems].join("\n");
    document.body.appendChild(out);
  };

  // Measure once the page is laid out with its fonts.
  window.addEventListener("load", () => document.fonts.ready.then(run));
})();
