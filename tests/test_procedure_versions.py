"""Known answers for procedures billed in the other ICD version (ehrlib.pipeline.offline.procedure_versions)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.procedure_versions import is_pcs, other_version_namesakes
from ehrlib.pipeline.offline.terminology import Terminology, Title

P = "procedures_icd"
# an ICD-9 dictionary part: the concepts a clinician's wording resolves to
DICTIONARY = Terminology([Title(P, "387", "Interruption of the vena cava"),
                          Title(P, "9910", "Injection or infusion of thrombolytic agent"),
                          Title(P, "3142", "Laryngoscopy and other tracheoscopy"),
                          Title(P, "311", "Temporary tracheostomy"),
                          Title("diagnoses_icd", "4151", "Pulmonary embolism and infarction")])
IVC = Title(P, "06H03DZ", "Insertion of Intraluminal Device into Inferior Vena Cava, Percutaneous Approach")
SVC = Title(P, "02HV33Z", "Insertion of Infusion Device into Superior Vena Cava, Percutaneous Approach")
LYTIC = Title(P, "3E03317", "Introduction of Other Thrombolytic into Peripheral Vein, Percutaneous Approach")
LARYNX = Title(P, "0CJS8ZZ", "Inspection of Larynx, Via Natural or Artificial Opening Endoscopic")
AIRWAY = Title(P, "0BJ08ZZ", "Inspection of Tracheobronchial Tree, Via Natural or Artificial Opening Endoscopic")
VENT = Title(P, "5A1955Z", "Respiratory Ventilation, Greater than 96 Consecutive Hours")


def _namesakes(phrase: str, billed: list[Title]) -> list[str]:
    concepts = DICTIONARY.match(phrase, tables=(P, "diagnoses_icd"), limit=8)
    return [t.code for t in other_version_namesakes(phrase, concepts, billed)]


def test_versions_told_by_the_code():
    assert is_pcs("06H03DZ") and not is_pcs("387") and not is_pcs("99.10")


@pytest.mark.parametrize("phrase, billed, found", [
    ("IVC filter placement", [IVC, VENT], ["06H03DZ"]),      # the body part, in the other version's wording
    ("IVC filter placement", [SVC, VENT], []),               # the opposite vein is another procedure
    ("tPA", [LYTIC, VENT], ["3E03317"]),                     # the substance
    ("Laryngoscopy", [LARYNX, VENT], ["0CJS8ZZ"]),           # a compound: inspection of the larynx
    ("Tracheostomy", [AIRWAY, VENT], []),                    # "-ostomy" is no inspection
    ("Laryngoscopy", [Title(P, "3142", "Laryngoscopy and other tracheoscopy")], []),  # same version: not here
])
def test_a_billed_code_of_the_other_version_naming_the_procedure(phrase, billed, found):
    assert _namesakes(phrase, billed) == found


def test_no_namesake_for_a_diagnosis_concept():
    assert _namesakes("pulmonary embolism", [IVC, SVC, LYTIC]) == []
