"""The README's quick start through a client generated from the served OpenAPI document by
openapi-python-client: open a batch, deposit two documents, submit, wait for the end, read each
document's consultation. Run by tests/it/python_client.rs; argv: base URL, API key, scripts dir."""
import os
import sys
import time
import uuid

base, key, scripts = sys.argv[1:4]
# The generated package is in the working directory; the helpers that make PNG files in scripts/.
sys.path[:0] = [os.getcwd(), scripts]
from sceau_client import b64, png  # noqa: E402

from sceau_client_generated import AuthenticatedClient  # noqa: E402
from sceau_client_generated.api.batches import create_batch, deposit_document, get_batch, submit_batch  # noqa: E402
from sceau_client_generated.api.consultations import get_consultation  # noqa: E402
from sceau_client_generated.models import Batch, CreateBatchRequest, DepositRequest, Deposited, DocumentCategory  # noqa: E402
from sceau_client_generated.models import Consultation  # noqa: E402

client = AuthenticatedClient(base_url=base, token=key)

opened = create_batch.sync(client=client, body=CreateBatchRequest(external_ref="lot-1"), idempotency_key=str(uuid.uuid4()))
assert isinstance(opened, Batch), opened
for seed in (1, 2):
    body = DepositRequest(document=b64(png(400, seed=seed)), document_category=DocumentCategory.IDENTITE, external_ref=f"doc-{seed}")
    deposited = deposit_document.sync(opened.id, client=client, body=body, idempotency_key=str(uuid.uuid4()))
    assert isinstance(deposited, Deposited), deposited
# A retry of the submit with the same key is the same answer.
submit_key = str(uuid.uuid4())
submitted = submit_batch.sync(opened.id, client=client, idempotency_key=submit_key)
again = submit_batch.sync_detailed(opened.id, client=client, idempotency_key=submit_key)
assert isinstance(submitted, Batch) and submitted.status.value == "in_progress", submitted
assert again.status_code == 200 and again.headers.get("idempotent-replayed") == "true", again

deadline = time.time() + 60
while True:
    batch = get_batch.sync(opened.id, client=client)
    # The batch with its items (an allOf of Batch in the document, its own model here).
    assert type(batch).__name__ == "GetBatchResponse200", batch
    if batch.status.value == "ended":
        break
    assert time.time() < deadline, f"the batch did not end: {batch.status}"
    time.sleep(0.2)
for item in batch.items:
    consultation = get_consultation.sync(item.consultation_id, client=client)
    assert isinstance(consultation, Consultation), consultation
    print(item.external_ref, item.status.value, consultation.verdict.value, consultation.id)
