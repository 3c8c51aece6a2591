# TetRig material preset: Stiff Rubber (a filled, hard rubber such as a tyre tread).
# Stiffness: rubbers measure shear moduli of about 0.3-3 MPa, so E = 3G of about 1e6-1e7 Pa
#   (Gent, "Engineering with Rubber", 3rd ed. 2012, ch. 1): the stiff end, E = 1e7 Pa. On fine
#   cages this needs many more substeps than 10 to be as stiff as asked (README, Known limits).
# Volume: Poisson's ratio 0.48 gives K = E / (3 (1 - 2 nu)) = 1e7 / 0.12 = 8.33e7 Pa (real rubber
#   is stiffer still in bulk, about 2e9 Pa; Gent 2012).
# Density: carbon-black filled rubber, 1100-1300 kg/m^3: 1200 kg/m^3.
# Damping [1/s] is a drag on all motion (a fall too: terminal speed g / damping), not a material
#   loss: 0.5 keeps it bouncy.
import bpy
obj = bpy.context.active_object
settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig

settings.youngs_modulus = 10000000.0
settings.use_volume = True
settings.volume_stiffness = 83333333.0
settings.density = 1200.0
settings.damping = 0.5
