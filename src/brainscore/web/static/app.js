// Fold the leaderboard's tree columns and poll a submission's status. Plain JavaScript, no build step.
function toggle(button) {
    var node = button.dataset.node, folded = button.textContent === "−";
    button.textContent = folded ? "+" : "−";
    document.querySelectorAll("[data-ancestors]").forEach(function (cell) {
      var ancestors = cell.dataset.ancestors.split(" ");
      if (ancestors.indexOf(node) >= 0) {
        var hidden = Number(cell.dataset.hiddenBy || 0) + (folded ? 1 : -1);
        cell.dataset.hiddenBy = hidden;
        cell.style.display = hidden > 0 ? "none" : "";
      }
    });
}
document.querySelectorAll("button.fold").forEach(function (button) {
  button.addEventListener("click", function () { toggle(button); });
  if (button.dataset.startFolded) toggle(button);
});

function watchSubmission(id, status) {
  if (status !== "queued" && status !== "running" && status !== "preparing") return;
  var timer = setInterval(function () {
    fetch("/api/submissions/" + id, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (task) {
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
