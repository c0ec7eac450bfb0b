"""Document types: one module per type of voucher, resolved by type (docs/architecture.md, «Add a document type»).

kind.py says what a document type brings; registry.py resolves one by code, XML root or file name; invoice.py
(facturas and boletas), credit_note.py and debit_note.py are Yupana's own, built by the pipeline in sale.py;
preview.py is the totals' preview a type may offer (its amounts for a request still being typed).
"""
