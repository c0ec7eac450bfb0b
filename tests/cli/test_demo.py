"""`yupana demo` runs every step offline and says so in Spanish."""

from tests.helpers.base import run_cli


def test_demo_passes_every_step(home):
    done = run_cli("demo", timeout=300)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "✗" not in out
    assert "CDR 0" in out and "firma del CDR verificada" in out
    assert "20100066603-01-F001-1.xml adjunto" in out  # the factura's summary went by WhatsApp
    assert "«Recibido, ¡gracias!» de Cliente Demostración por el receptor" in out and "quedó «read»" in out
    assert "fuente: padron" in out  # the register answered with no provider configured
    assert "Demostración completa" in out
    assert not (home / "yupana.db").exists()  # the demo works in a folder of its own
