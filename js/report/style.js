'use strict';
// The page's stylesheet: dark by default, light under `prefers-color-scheme: light`, and a
// print sheet (light, no controls). Colours of the kinds of work (`cat-*`) serve the category
// bar and the flame graph alike.

module.exports = `
:root{color-scheme:dark;--bg:#0e1116;--panel:#161b22;--panel2:#1f2630;--border:#2d3542;--text:#e6edf3;--muted:#8d96a3;
--accent:#6ea8fe;--good:#3fb950;--fair:#d29922;--poor:#f85149;--info:#58a6ff;--grid:#262d38;--hover:rgba(255,255,255,.07);
--bar:#4e79a7;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
--m-rss:#76b7b2;--m-heapTotal:#8b8f98;--m-heapUsed:#f28e2b;--m-external:#b07aa1;--m-arrayBuffers:#edc948;
--c-user:#f28e2b;--c-node:#59a14f;--c-native:#9c755f;--c-json:#b07aa1;--c-regex:#ff9da7;--c-crypto:#76b7b2;
--c-sync-io:#e15759;--c-gc:#edc948;--c-program:#8b8f98;--c-idle:#50545c}
@media (prefers-color-scheme:light){:root{color-scheme:light;--bg:#f5f6f8;--panel:#fff;--panel2:#eef1f5;--border:#d8dde5;
--text:#1c2128;--muted:#5b6573;--accent:#0b62d6;--good:#1a7f37;--fair:#9a6700;--poor:#cf222e;--info:#0969da;--grid:#e6e9ee;
--hover:rgba(0,0,0,.05)}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--text);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
body{margin:0}
a{color:var(--accent)}
code,.fn,.loc,.target,.key{font-family:var(--mono);font-size:12.5px}
.fn{color:var(--text);font-weight:600}
.loc,.muted,.hint{color:var(--muted)}
.muted{font-weight:400}
header{padding:24px 32px 8px;max-width:1400px;margin:0 auto}
header h1{margin:0;font-size:22px;letter-spacing:.2px}
header h1 span{color:var(--muted);font-weight:400}
header .sub{color:var(--muted);margin:4px 0 0}
.partial{display:inline-block;margin-left:8px;padding:1px 8px;border-radius:10px;font-size:12px;background:var(--fair);color:#111;vertical-align:middle}
nav{position:sticky;top:0;z-index:5;background:color-mix(in srgb,var(--bg) 88%,transparent);backdrop-filter:blur(6px);border-bottom:1px solid var(--border)}
nav ul{display:flex;gap:4px;flex-wrap:wrap;list-style:none;margin:0 auto;padding:8px 32px;max-width:1400px}
nav a{display:block;padding:4px 10px;border-radius:6px;color:var(--muted);text-decoration:none}
nav a:hover{background:var(--panel2);color:var(--text)}
main{max-width:1400px;margin:0 auto;padding:16px 32px 48px}
section{background:var(--panel);border:1px solid var(--border);border-radius:10px;padding:18px 22px;margin:0 0 18px;scroll-margin-top:56px}
section>h2{margin:0 0 12px;font-size:17px}
h3{font-size:14px;margin:20px 0 8px;color:var(--text)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:12px}
.card{display:flex;flex-direction:column;gap:2px;padding:12px 14px;border:1px solid var(--border);border-left:4px solid var(--accent);border-radius:8px;background:var(--panel2);color:var(--text);text-decoration:none;min-width:0}
.card:hover{border-color:var(--accent)}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.6px}
.card .value{font-size:22px;font-weight:650;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.card.wide .value{font-size:16px;line-height:1.9}
.card .value .unit{font-size:13px;font-weight:500;color:var(--muted)}
.card .sub{color:var(--muted);font-size:12.5px;overflow-wrap:anywhere}
.card.good{border-left-color:var(--good)}.card.fair{border-left-color:var(--fair)}.card.poor{border-left-color:var(--poor)}
.facts{display:flex;flex-wrap:wrap;gap:6px 20px;margin:0 0 12px;color:var(--muted)}
.facts b{color:var(--text);font-weight:600}
.empty{color:var(--muted);font-style:italic;margin:8px 0}
.cap{color:var(--fair);font-size:12.5px;margin:6px 0}
.cap::before{content:"✂ "}
.findings{list-style:none;margin:0;padding:0;display:grid;gap:10px}
.finding{display:flex;gap:12px;align-items:flex-start;padding:10px 14px;border-radius:8px;background:var(--panel2);border-left:4px solid var(--info)}
.finding.critical{border-left-color:var(--poor)}.finding.warning{border-left-color:var(--fair)}.finding.ok{border-left-color:var(--good)}
.finding p{margin:0 0 4px}.finding .where{color:var(--muted)}.finding .suggestion{color:var(--muted);max-width:110ch}
.finding .more{font-size:12.5px}
.badge{flex:none;display:inline-block;min-width:74px;text-align:center;padding:2px 8px;border-radius:10px;font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.5px;color:#111;background:var(--info)}
.badge.critical{background:var(--poor);color:#fff}.badge.warning{background:var(--fair)}.badge.ok{background:var(--good)}
.table-wrap{overflow-x:auto;margin:0 0 8px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 10px;border-bottom:1px solid var(--border);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;white-space:nowrap;user-select:none}
table.sortable th{cursor:pointer}
table.sortable th:hover{color:var(--text)}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
th.num,td.num{text-align:right;white-space:nowrap}
tbody tr:hover{background:var(--hover)}
td{overflow-wrap:anywhere}
.bar{display:inline-block;width:70px;height:8px;margin-right:8px;border-radius:4px;background:var(--panel2);vertical-align:middle;overflow:hidden}
.bar>span{display:block;height:100%;background:var(--bar)}
.bar-label{display:inline-block;min-width:52px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:-1px;flex:none}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--muted);margin:6px 0}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(440px,100%),1fr));gap:0 24px}
details summary{cursor:pointer}
details.stack summary{color:var(--text);font-family:var(--mono);font-size:12.5px}
details.callers{border:1px solid var(--border);border-radius:8px;padding:8px 12px;margin:0 0 8px;background:var(--panel2)}
details.callers>details{margin:6px 0 0 14px}
li.lib,li.lib summary{color:var(--muted)}
details ol{margin:4px 0 4px;padding-left:26px;font-size:12.5px}
details li{margin:1px 0}
.delta.good{color:var(--good)}.delta.fair{color:var(--fair)}.delta.poor{color:var(--poor)}
.delta{font-weight:650}
svg.chart{width:100%;height:auto;display:block;margin:4px 0 8px}
.grid{stroke:var(--grid);stroke-width:1}
.tick{fill:var(--muted);font-size:11px}
.hover{fill:transparent}.hover:hover{fill:var(--hover)}
.line{fill:none;stroke-width:2;stroke-linejoin:round}
.m-rss{stroke:var(--m-rss);background:var(--m-rss)}.m-heapTotal{stroke:var(--m-heapTotal);background:var(--m-heapTotal)}
.m-heapUsed{stroke:var(--m-heapUsed);background:var(--m-heapUsed)}.m-external{stroke:var(--m-external);background:var(--m-external)}
.dot{fill-opacity:.8;stroke:var(--panel);stroke-width:1}.dot:hover{fill-opacity:1;stroke:var(--text)}
.threshold{stroke:var(--poor);stroke-dasharray:4 4;stroke-width:1}
.start-up{stroke:var(--muted);stroke-dasharray:2 4;stroke-width:1.5}
.catbar{display:flex;height:14px;border-radius:4px;overflow:hidden;margin:4px 0}
.cat-user{--c:var(--c-user)}.cat-node{--c:var(--c-node)}.cat-native{--c:var(--c-native)}.cat-json{--c:var(--c-json)}
.cat-regex{--c:var(--c-regex)}.cat-crypto{--c:var(--c-crypto)}.cat-sync-io{--c:var(--c-sync-io)}.cat-gc{--c:var(--c-gc)}
.cat-program{--c:var(--c-program)}.cat-idle{--c:var(--c-idle)}
.catbar>span,.swatch[class*=cat-]{background:var(--c)}
.toolbar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:0 0 6px}
.toolbar input[type=search]{flex:0 1 320px;padding:6px 10px;border-radius:6px;border:1px solid var(--border);background:var(--panel2);color:var(--text);font:inherit}
.toolbar button{padding:6px 12px;border-radius:6px;border:1px solid var(--border);background:var(--panel2);color:var(--text);font:inherit;cursor:pointer}
.toolbar button:hover{border-color:var(--accent)}
.hint{font-size:12.5px;margin:0 0 6px}
.flame-svg{width:100%;display:block;font-family:var(--mono)}
.flame-svg rect{fill:var(--c);stroke:var(--panel);stroke-width:1;cursor:pointer}
.flame-svg rect:hover{stroke:var(--text)}
.flame-svg rect.ancestor{fill-opacity:.45}
.flame-svg.searching rect{fill-opacity:.25}
.flame-svg.searching rect.hit{fill:#d946ef;fill-opacity:1}
.flame-svg text{font-size:11px;fill:#111;pointer-events:none}
.flame-svg:focus{outline:none}.flame-svg:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.flame-svg rect.focus{stroke:var(--text);stroke-width:2}
.toolbar .check{display:inline-flex;gap:6px;align-items:center;color:var(--muted);cursor:pointer}
.toolbar button:disabled{opacity:.45;cursor:default}
.chain{display:flex;flex-wrap:wrap;gap:2px 0;list-style:none;margin:0 0 8px;padding:6px 8px;border:1px solid var(--border);border-radius:8px;background:var(--panel2);font-size:12.5px}
.chain li+li::before{content:"›";color:var(--muted);margin:0 4px}
.chain li.open::before{content:"";margin:0 6px}
.chain button{padding:1px 6px;border:1px solid transparent;border-radius:5px;background:none;color:var(--text);font:inherit;cursor:pointer;text-align:left}
.chain button:hover,.chain button:focus-visible{border-color:var(--accent)}
.chain button[aria-current]{background:var(--hover);border-color:var(--border)}
.chain .loc{font-size:11.5px}
.chain[hidden],.flame-svg[hidden]{display:none}
#flame-sandwich-open{border-color:var(--border);background:var(--panel)}
.sandwich h4{margin:10px 0 4px;font-size:13px;font-family:var(--mono)}
#sandwich-title{font-size:14px;overflow-wrap:anywhere}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
.meta dt{color:var(--muted)}.meta dd{margin:0}
.opts{display:flex;flex-wrap:wrap;gap:4px 16px;font-family:var(--mono);font-size:12px}
.caps{margin:0;padding-left:20px;color:var(--fair)}
#tip{position:fixed;z-index:10;max-width:520px;padding:8px 10px;border-radius:6px;background:var(--panel2);border:1px solid var(--border);
box-shadow:0 6px 24px rgba(0,0,0,.35);font-size:12px;pointer-events:none;white-space:pre-wrap;overflow-wrap:anywhere}
#tip div{unicode-bidi:plaintext}
#tip div:first-child{font-weight:650;margin-bottom:2px}
bdi{unicode-bidi:isolate}
@media (max-width:700px){header,main{padding-left:12px;padding-right:12px}nav ul{padding:6px 12px}section{padding:14px}}
@media print{
:root{color-scheme:light;--bg:#fff;--panel:#fff;--panel2:#f3f4f6;--border:#d0d7de;--text:#000;--muted:#444;--grid:#e5e7eb;--accent:#0b62d6}
nav,.toolbar,.hint,#tip,.finding .more{display:none!important}
header,main{padding-left:0;padding-right:0;max-width:none}
section{break-inside:auto;border:none;border-top:2px solid #000;border-radius:0;padding:10px 0}
.card,.finding,tr,svg{break-inside:avoid}
a{color:inherit;text-decoration:none}
}
`;
