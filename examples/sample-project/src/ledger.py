"""Ledger core of the sample project (placeholder code for the example review)."""


class Ledger:
    def __init__(self, db):
        self.db = db

    def commit(self):
        self.db.commit()

    def record_payment(self, invoice_id, cents):
        # Phase 3 plan 03-02 adds the voided-invoice check here.
        self.db.execute(
            "INSERT INTO payments (invoice_id, cents) VALUES (?, ?)", (invoice_id, cents)
        )
        self.commit()
