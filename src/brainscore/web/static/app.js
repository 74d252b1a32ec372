// Fold the leaderboard's tree columns and poll a submission's status. Plain JavaScript, no build step.
function toggle(button) {
    var node = button.dataset.node, folded = button.textContent === "−";
    button.textContent = folded ? "+" : "−";
    button.setAttribute("aria-expanded", folded ? "false" : "true");
    // a column's ancestors are on its header only; its cells are found by the header's index in each row
    var table = button.closest("table"), heads = table.tHead.rows[0].cells, under = [];
    Array.prototype.forEach.call(heads, function (th, index) {
      if (th.dataset.ancestors !== undefined && th.dataset.ancestors.split(" ").indexOf(node) >= 0) under.push(index);
    });
    function fold(cell) {
      var hidden = Number(cell.dataset.hiddenBy || 0) + (folded ? 1 : -1);
      cell.dataset.hiddenBy = hidden;
      cell.hidden = hidden > 0;  // the hidden attribute: the Content-Security-Policy allows no inline style
    }
    under.forEach(function (index) { fold(heads[index]); });
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      if (row.cells.length !== heads.length) return;  // the one "no scores" row spans every column
      under.forEach(function (index) { fold(row.cells[index]); });
    });
}
// the folded columns live in the address (?fold=a,b), so a view can be shared; the server renders them folded
function rememberFolds() {
  var folded = [];
  document.querySelectorAll("button.fold").forEach(function (b) { if (b.textContent === "+") folded.push(b.dataset.node); });
  var url = new URL(location.href);
  url.searchParams.set("fold", folded.sort().join(","));
  history.replaceState(null, "", url);
  document.querySelectorAll("a.sort, #export-csv, #export-json, #export-bib").forEach(function (a) {
    var target = new URL(a.href);
    target.searchParams.set("fold", folded.sort().join(","));
    a.href = target.toString();
  });
  var field = document.querySelector("#filter input[name=fold]");
  if (!field) {
    field = document.createElement("input"); field.type = "hidden"; field.name = "fold";
    var filter = document.getElementById("filter"); if (filter) filter.appendChild(field);
  }
  field.value = folded.sort().join(",");
}
document.querySelectorAll("button.fold").forEach(function (button) {
  button.addEventListener("click", function () { toggle(button); rememberFolds(); });
});
// the explore panel's fields at their default (any, empty, weight 1) stay out of the address: it keeps only the view's state
var filterForm = document.getElementById("filter");
if (filterForm) {
  filterForm.addEventListener("submit", function () {
    filterForm.querySelectorAll("[data-default]").forEach(function (field) {
      if (field.value === field.dataset.default || Number(field.value) === Number(field.dataset.default) && field.dataset.default !== "") field.disabled = true;
    });
  });
}
// tick rows to compare them
var compare = document.getElementById("compare");
if (compare) {
  var boxes = document.querySelectorAll("td.pick input[type=checkbox]");
  boxes.forEach(function (box) {
    box.addEventListener("change", function () {
      var picked = Array.prototype.filter.call(boxes, function (b) { return b.checked; }).map(function (b) { return b.value; });
      compare.querySelector("input[name=models]").value = picked.join(",");
      compare.querySelector("button").disabled = picked.length < 2;
    });
  });
}

function watchSubmission(id, status) {
  if (status !== "queued" && status !== "running" && status !== "preparing") return;
  var timer = setInterval(function () {
    fetch("/api/submissions/" + encodeURIComponent(id), {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (task) {
      var log = document.getElementById("log");
      var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 5;
      log.textContent = task.log;
      if (atBottom) log.scrollTop = log.scrollHeight;
      var s = document.getElementById("status");
      s.textContent = task.status; s.className = "status-" + task.status;
      document.getElementById("detail").textContent = task.place ? "place " + task.place + " in the queue" :
        task.status === "running" ? "benchmark " + task.progress.current + " of " + task.progress.total : "";
      if (task.status !== "queued" && task.status !== "running") { clearInterval(timer); location.reload(); }
    });
  }, 1000);
}
// a submission's page names its task on the log (no inline script: the Content-Security-Policy allows none)
var watched = document.querySelector("#log[data-submission]");
if (watched) watchSubmission(watched.dataset.submission, watched.dataset.status);

// a score page's command: copied to the clipboard with one click
document.querySelectorAll("button.copy").forEach(function (button) {
  button.addEventListener("click", function () {
    var text = document.getElementById(button.dataset.copy).textContent;
    navigator.clipboard.writeText(text).then(function () { button.textContent = "copied"; });
  });
});

// a benchmark being scored on every public model: its progress, refreshed until nothing is queued or running
var rescoring = document.getElementById("rescoring");
if (rescoring) {
  var refresh = setInterval(function () {
    fetch("/api/benchmarks/" + encodeURIComponent(rescoring.dataset.benchmark) + "/progress").then(function (r) { return r.json(); }).then(function (p) {
      if (!p) return;
      ["scored", "total", "queued", "running", "failed"].forEach(function (k) { document.getElementById("rescoring-" + k).textContent = p[k]; });
      var bar = rescoring.querySelector("progress"); bar.max = p.total; bar.value = p.scored;
      if (!p.queued && !p.running) clearInterval(refresh);
    });
  }, 5000);
}
